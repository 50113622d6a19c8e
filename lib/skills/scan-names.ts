import { children, isNode, isReference, type Node, unwrap } from './scan-ast'

/**
 * Name resolution for the scanner: which declaration each name in the program reads (or none: a global), and
 * what a `const` holds when that can be known. Only `const` is followed: a `let`, a `var`, a parameter or an
 * assignment may hold anything by the time it is read, so what reaches one of them cannot be proved.
 */

/** A declared name. `path`: the keys a destructuring pattern took it under (`const { a: { b } } = x`: a, b). */
export interface Binding {
  kind: 'const' | 'let' | 'var' | 'param' | 'function' | 'class' | 'import' | 'catch'
  init?: Node
  path: Array<Node | number | null>
  /** An import's module (`import x from 'process'`: its source node) and what it takes (`default`, `*` or a name). */
  source?: Node
  imported?: string
}

interface Scope {
  up: Scope | null
  names: Map<string, Binding>
  fn: boolean
}

export interface Names {
  parents: Map<Node, [Node, string]>
  /** Each Identifier that reads a variable, with its declaration (null: a global). */
  refs: Map<Node, Binding | null>
  /** `this` where it may be the global object: top level, or a function that is not a method (sloppy calls). */
  globalThis: Set<Node>
}

// Type-only parts of TypeScript: names in them are never read at run time.
const TYPE_KEYS = new Set(['typeAnnotation', 'returnType', 'typeParameters', 'typeArguments', 'superTypeParameters', 'superTypeArguments', 'implements'])
const RUNTIME_TS = /^TS(?:AsExpression|SatisfiesExpression|NonNullExpression|TypeAssertion|InstantiationExpression|ParameterProperty|EnumDeclaration|EnumMember|ModuleDeclaration|ModuleBlock|ImportEqualsDeclaration|ExternalModuleReference|ExportAssignment)$/
const FUNCTION = /^(?:FunctionDeclaration|FunctionExpression|ArrowFunctionExpression)$/
const BLOCK = /^(?:BlockStatement|ForStatement|ForInStatement|ForOfStatement|SwitchStatement|CatchClause|StaticBlock|ClassExpression|TSModuleBlock)$/

/** Each Identifier a pattern binds or assigns, with the keys it was taken under. */
function patternNames(p: Node | null | undefined, visit: (id: Node, path: Binding['path']) => void, path: Binding['path'] = []) {
  if (!isNode(p)) return
  if (p.type === 'Identifier') visit(p, path)
  else if (p.type === 'ObjectPattern')
    for (const prop of p.properties as Node[]) {
      if (prop.type === 'RestElement') patternNames(prop.argument as Node, visit, [...path, null])
      else patternNames(prop.value as Node, visit, [...path, prop.computed ? (prop.key as Node) : { type: 'Literal', value: (prop.key as Node).name ?? (prop.key as Node).value }])
    }
  else if (p.type === 'ArrayPattern') (p.elements as Array<Node | null>).forEach((e, i) => patternNames(e, visit, [...path, e?.type === 'RestElement' ? null : i]))
  else if (p.type === 'AssignmentPattern') patternNames(p.left as Node, visit, path)
  else if (p.type === 'RestElement') patternNames(p.argument as Node, visit, [...path, null])
  else if (p.type === 'TSParameterProperty') patternNames(p.parameter as Node, visit, path)
}

export function resolveNames(program: Node): Names {
  const parents = new Map<Node, [Node, string]>()
  const pending: Array<[Node, Scope]> = []
  const targets = new Set<Node>()
  const globalThis = new Set<Node>()
  const top: Scope = { up: null, names: new Map(), fn: true }
  const declare = (scope: Scope, p: Node | null | undefined, b: Omit<Binding, 'path'>) =>
    patternNames(p, (id, path) => {
      targets.add(id)
      scope.names.set(id.name as string, { ...b, path })
    })
  const fnScope = (s: Scope) => {
    while (!s.fn) s = s.up!
    return s
  }

  // [node, scope it is in, whether `this` there may be the global object]
  const stack: Array<[Node, Scope, boolean]> = [[program, top, true]]
  while (stack.length) {
    const [node, scope, thisGlobal] = stack.pop()!
    let inner = scope
    let innerThis = thisGlobal
    const t = node.type
    if (node.declare === true || /^TS(?:Interface|TypeAlias)Declaration$|^TSDeclare/.test(t)) continue
    if (FUNCTION.test(t)) {
      inner = { up: scope, names: new Map(), fn: true }
      if (t === 'FunctionDeclaration') declare(scope, node.id as Node, { kind: 'function' })
      else if (t === 'FunctionExpression') declare(inner, node.id as Node, { kind: 'function' })
      for (const p of node.params as Node[]) declare(inner, p, { kind: 'param' })
      if (t !== 'ArrowFunctionExpression') {
        const [parent, key] = parents.get(node) ?? [null, '']
        // A method's `this` is its object; a plain function's may be the global object (a sloppy-mode call).
        innerThis = !(key === 'value' && /^(?:Property|MethodDefinition)$/.test(parent?.type ?? ''))
      }
    } else if (BLOCK.test(t)) {
      inner = { up: scope, names: new Map(), fn: false }
      if (t === 'CatchClause') declare(inner, node.param as Node, { kind: 'catch' })
      if (t === 'ClassExpression') declare(inner, node.id as Node, { kind: 'class' })
    } else if (t === 'VariableDeclaration') {
      const kind = node.kind === 'var' ? 'var' : node.kind === 'const' ? 'const' : 'let'
      for (const d of node.declarations as Node[]) declare(kind === 'var' ? fnScope(scope) : scope, d.id as Node, { kind, init: (d.init as Node) ?? undefined })
    } else if (t === 'ClassDeclaration' || t === 'TSEnumDeclaration' || t === 'TSModuleDeclaration') {
      declare(scope, node.id as Node, { kind: 'class' })
    } else if (t === 'ClassBody' || t === 'PropertyDefinition') {
      innerThis = false
    } else if (t === 'ImportDeclaration') {
      for (const s of node.specifiers as Node[]) {
        const imported = s.type === 'ImportDefaultSpecifier' ? 'default' : s.type === 'ImportNamespaceSpecifier' ? '*' : String((s.imported as Node).name ?? (s.imported as Node).value)
        declare(top, s.local as Node, { kind: 'import', source: node.source as Node, imported })
      }
    } else if (t === 'TSImportEqualsDeclaration') {
      const ref = node.moduleReference as Node
      declare(scope, node.id as Node, { kind: 'import', source: ref.expression as Node, imported: 'default' })
    } else if (t === 'AssignmentExpression' || t === 'ForInStatement' || t === 'ForOfStatement') {
      patternNames(node.left as Node, (id) => targets.add(id))
    } else if (t === 'UpdateExpression' && (node.argument as Node).type === 'Identifier') {
      targets.add(node.argument as Node)
    } else if (t === 'ThisExpression' && thisGlobal) {
      globalThis.add(node)
    }
    for (const [c, k] of children(node)) {
      if (TYPE_KEYS.has(k) || (c.type.startsWith('TS') && !RUNTIME_TS.test(c.type))) continue
      parents.set(c, [node, k])
      if (c.type === 'Identifier' && !targets.has(c) && k !== 'id' && isReference(node, k)) pending.push([c, inner])
      stack.push([c, inner, innerThis])
    }
  }

  const refs = new Map<Node, Binding | null>()
  for (const [id, scope] of pending) {
    let s: Scope | null = scope
    while (s && !s.names.has(id.name as string)) s = s.up
    refs.set(id, s ? s.names.get(id.name as string)! : null)
  }
  return { parents, refs, globalThis }
}

/**
 * Constant values: strings (and numbers, as strings) the program writes or assembles so that they can be known
 * without running it: literals, `+`, templates, `String.fromCharCode`, `atob`, `decodeURIComponent`, string methods
 * (`split`, `reverse`, `join`, `slice`, `replace`, case), array and object literals read by a constant key, and
 * `const` names holding any of these. So a name assembled from pieces is read whole.
 */
export function folder(names: Names) {
  const STRING_METHODS = new Set(['toLowerCase', 'toUpperCase', 'trim', 'trimStart', 'trimEnd', 'slice', 'substring', 'substr', 'replace', 'replaceAll', 'concat', 'charAt', 'at', 'normalize'])

  /** The expression a `const` name stands for (its initializer, or the part of it a pattern took). */
  function constValue(id: Node, depth: number): Node | undefined {
    const b = names.refs.get(id)
    if (b?.kind !== 'const' || !b.init) return undefined
    let v: Node | undefined = b.init
    for (const k of b.path) {
      if (!v || k === null) return undefined
      v = pick(v, typeof k === 'number' ? String(k) : fold(k, depth + 1), depth + 1)
    }
    return v
  }

  /** The element or property of an array or object literal under a constant key. */
  function pick(raw: Node, key: string | undefined, depth: number): Node | undefined {
    if (key === undefined || depth > 20) return undefined
    const n = unwrap(raw)
    if (n.type === 'Identifier') {
      const v = constValue(n, depth)
      return v && pick(v, key, depth + 1)
    }
    if (n.type === 'ArrayExpression') {
      const items = n.elements as Array<Node | null>
      return items.some((e) => e?.type === 'SpreadElement') ? undefined : (items[Number(key)] ?? undefined)
    }
    if (n.type !== 'ObjectExpression') return undefined
    let found: Node | undefined
    for (const p of n.properties as Node[]) {
      if (p.type !== 'Property') return undefined // a spread may hold the key too
      if (propertyKey(p, depth) === key) found = p.value as Node
    }
    return found
  }

  const propertyKey = (p: Node, depth: number) => {
    const k = p.key as Node
    return p.computed ? fold(k, depth + 1) : k.type === 'Identifier' ? (k.name as string) : k.type === 'Literal' ? String(k.value) : undefined
  }

  /** An array of constant strings: an array literal, `s.split(sep)`, `[...s]`, `Array.from(s)`, `.reverse()` of one. */
  function foldList(raw: Node, depth: number): string[] | undefined {
    if (depth > 20) return undefined
    const n = unwrap(raw)
    if (n.type === 'Identifier') {
      const v = constValue(n, depth)
      return v && foldList(v, depth + 1)
    }
    if (n.type === 'ArrayExpression') {
      const out: string[] = []
      for (const e of n.elements as Array<Node | null>) {
        const v = !e ? '' : e.type === 'SpreadElement' ? foldList(e.argument as Node, depth + 1) : fold(e, depth + 1)
        if (v === undefined) return undefined
        if (Array.isArray(v)) out.push(...v)
        else out.push(v)
      }
      return out
    }
    if (n.type !== 'CallExpression') {
      const s = fold(n, depth + 1)
      return s === undefined ? undefined : [...s] // spread of a string: its characters
    }
    const callee = unwrap(n.callee as Node)
    const args = n.arguments as Node[]
    if (callee.type !== 'MemberExpression') return undefined
    const method = memberName(callee, depth)
    const target = callee.object as Node
    if (method === 'split') {
      const s = fold(target, depth + 1)
      const sep = args.length ? fold(args[0], depth + 1) : undefined
      return s === undefined || (args.length && sep === undefined) ? undefined : args.length ? s.split(sep!) : [s]
    }
    if (method === 'reverse' || method === 'slice') {
      const list = foldList(target, depth + 1)
      const nums = args.map((a) => Number(fold(a, depth + 1)))
      return list && (method === 'reverse' ? list.reverse() : list.slice(...nums))
    }
    if (method === 'from' && unwrap(target).type === 'Identifier' && (unwrap(target).name as string) === 'Array' && args.length === 1) return foldList(args[0], depth + 1)
    return undefined
  }

  /** `obj.name` or `obj[key]`: the property's name, or undefined when it cannot be known. */
  function memberName(member: Node, depth = 0): string | undefined {
    const prop = member.property as Node
    if (!member.computed) return prop.type === 'Identifier' || prop.type === 'PrivateIdentifier' ? (prop.name as string) : undefined
    return fold(prop, depth + 1)
  }

  /** The string a constant expression evaluates to, or undefined when it is not constant. */
  function fold(raw: Node, depth = 0): string | undefined {
    if (depth > 20) return undefined
    const node = unwrap(raw)
    switch (node.type) {
      case 'Literal':
        return typeof node.value === 'string' || typeof node.value === 'number' ? String(node.value) : undefined
      case 'Identifier': {
        const v = constValue(node, depth)
        return v && fold(v, depth + 1)
      }
      case 'TemplateLiteral': {
        const parts = (node.expressions as Node[]).map((e) => fold(e, depth + 1))
        if (parts.some((p) => p === undefined)) return undefined
        return (node.quasis as Node[]).map((q, i) => String((q.value as { cooked: string | null }).cooked ?? '') + (parts[i] ?? '')).join('')
      }
      case 'BinaryExpression': {
        if (node.operator !== '+') return undefined
        const [l, r] = [fold(node.left as Node, depth + 1), fold(node.right as Node, depth + 1)]
        return l === undefined || r === undefined ? undefined : l + r
      }
      case 'MemberExpression': {
        const key = memberName(node, depth)
        const v = pick(node.object as Node, key, depth + 1)
        if (v) return fold(v, depth + 1)
        const list = key !== undefined && /^\d+$/.test(key) ? foldList(node.object as Node, depth + 1) : undefined
        return list?.[Number(key)]
      }
      case 'CallExpression': {
        const callee = unwrap(node.callee as Node)
        const args = (node.arguments as Node[]).map((a) => (a.type === 'SpreadElement' ? undefined : fold(a, depth + 1)))
        const known = args.every((a) => a !== undefined) ? (args as string[]) : undefined
        const name = callee.type === 'Identifier' ? (callee.name as string) : callee.type === 'MemberExpression' ? memberName(callee, depth) : undefined
        const owner = callee.type === 'MemberExpression' ? unwrap(callee.object as Node) : undefined
        try {
          if (name === 'fromCharCode' && owner?.name === 'String') return known?.every((c) => /^\d+$/.test(c)) ? String.fromCharCode(...known.map(Number)) : undefined
          if (!owner && known?.length === 1 && (name === 'atob' || name === 'decodeURIComponent' || name === 'unescape' || name === 'String')) {
            return name === 'atob' ? atob(known[0]) : name === 'String' ? known[0] : decodeURIComponent(known[0])
          }
          if (!owner || !known) return undefined
          if (name === 'join') {
            const list = foldList(owner, depth + 1)
            return list?.join(known.length ? known[0] : ',')
          }
          if (name && STRING_METHODS.has(name)) {
            const s = fold(owner, depth + 1)
            const method = (String.prototype as unknown as Record<string, (...a: unknown[]) => unknown>)[name]
            const out = s === undefined ? undefined : method.apply(s, /^(?:slice|substring|substr|charAt|at)$/.test(name) ? known.map(Number) : known)
            return typeof out === 'string' ? out : undefined
          }
        } catch {
          return undefined
        }
        return undefined
      }
      default:
        return undefined
    }
  }

  return { fold, memberName, constValue }
}
