import { children, isNode, isReference, type Node, unwrap } from './ast'

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
 * Constant values: what an expression evaluates to when it can be known without running the program: literals,
 * `+`, templates, array and object literals and what is read from them by a constant key, `String.fromCharCode`,
 * `atob`, `decodeURIComponent`, string and array methods (`split`, `reverse`, `join`, `slice`, `replace`, case...),
 * and `const` names holding any of these. So a name assembled from pieces is read whole.
 */
export function folder(names: Names) {
  // Methods that only compute a value from their receiver and arguments (none can grow a string without bound).
  const METHODS = /^(?:toLowerCase|toUpperCase|trim|trimStart|trimEnd|slice|substring|substr|replace|replaceAll|concat|charAt|at|normalize|split|reverse|join)$/
  const FUNCTIONS: Record<string, (...a: never[]) => unknown> = { atob, decodeURIComponent, unescape: decodeURIComponent, String, 'String.fromCharCode': String.fromCharCode, 'Array.from': Array.from }
  type Value = string | number | Value[] | { [key: string]: Value } | undefined
  // Each fold visits at most this many nodes, and no value grows past MAX_LENGTH: `const b = a + a` forty times
  // over, or objects of objects, cost the scanner nothing. A name that long hides nothing a shorter one would.
  const BUDGET = 1000
  const MAX_LENGTH = 4096
  let budget = BUDGET

  /** The value of a constant expression, or undefined when it is not constant (or too costly to know). */
  function value(raw: Node, depth: number): Value {
    if (depth > 20 || --budget < 0) return undefined
    const v = evaluate(unwrap(raw), depth)
    return (typeof v === 'string' || Array.isArray(v)) && v.length > MAX_LENGTH ? undefined : v
  }

  function evaluate(n: Node, depth: number): Value {
    const sub = (x: unknown) => (isNode(x) ? value(x, depth + 1) : undefined)
    switch (n.type) {
      case 'Literal':
        return typeof n.value === 'string' || typeof n.value === 'number' ? n.value : undefined
      case 'Identifier': {
        const b = names.refs.get(n)
        if (b?.kind !== 'const' || !b.init) return undefined
        let v = sub(b.init)
        for (const k of b.path) v = k === null ? undefined : at(v, typeof k === 'number' ? k : sub(k))
        return v
      }
      case 'TemplateLiteral': {
        const parts = (n.expressions as Node[]).map(sub)
        if (parts.some((p) => typeof p !== 'string' && typeof p !== 'number')) return undefined
        return (n.quasis as Node[]).map((q, i) => String((q.value as { cooked: string | null }).cooked ?? '') + (parts[i] ?? '')).join('')
      }
      case 'BinaryExpression': {
        const [l, r] = [sub(n.left), sub(n.right)]
        return n.operator === '+' && (typeof l === 'string' || typeof l === 'number') && (typeof r === 'string' || typeof r === 'number') ? (l as string) + (r as string) : undefined
      }
      case 'ArrayExpression': {
        const out: Value[] = []
        for (const e of n.elements as Array<Node | null>) {
          const v = e?.type === 'SpreadElement' ? sub(e.argument) : e ? sub(e) : ''
          if (v === undefined || (e?.type === 'SpreadElement' && typeof v !== 'string' && !Array.isArray(v))) return undefined
          if (e?.type === 'SpreadElement') out.push(...(v as string | Value[]))
          else out.push(v)
        }
        return out
      }
      case 'ObjectExpression': {
        const out: { [key: string]: Value } = Object.create(null)
        for (const p of n.properties as Node[]) {
          const k = p.type === 'Property' ? key(p, depth) : undefined
          if (k === undefined) return undefined // a spread or a computed key may hold any key
          out[k] = sub(p.value)
        }
        return out
      }
      case 'MemberExpression':
        return at(sub(n.object), n.computed ? sub(n.property) : ((n.property as Node).name as string))
      case 'CallExpression': {
        const callee = unwrap(n.callee as Node)
        const args = (n.arguments as Node[]).map((a) => (a.type === 'SpreadElement' ? undefined : sub(a)))
        if (args.some((a) => typeof a !== 'string' && typeof a !== 'number')) return undefined
        try {
          if (callee.type !== 'MemberExpression' || callee.computed) {
            const name = callee.type === 'Identifier' && names.refs.get(callee) === null ? (callee.name as string) : undefined
            return name && Object.hasOwn(FUNCTIONS, name) ? (FUNCTIONS[name] as (...a: unknown[]) => Value)(...args) : undefined
          }
          const method = (callee.property as Node).name as string
          const owner = unwrap(callee.object as Node)
          if (owner.type === 'Identifier' && names.refs.get(owner) === null && Object.hasOwn(FUNCTIONS, `${owner.name}.${method}`)) {
            return (FUNCTIONS[`${owner.name}.${method}`] as (...a: unknown[]) => Value)(...args)
          }
          const target = sub(owner)
          if (!METHODS.test(method) || (typeof target !== 'string' && !Array.isArray(target))) return undefined
          const out = (target as unknown as Record<string, (...a: unknown[]) => Value>)[method]?.(...args)
          return typeof out === 'string' || (Array.isArray(out) && out.every((x) => typeof x === 'string')) ? out : undefined
        } catch {
          return undefined
        }
      }
      default:
        return undefined
    }
  }

  /** `v[k]` for a constant array, string or object. */
  function at(v: Value, k: Value): Value {
    if (k === undefined || v === undefined || typeof v === 'number') return undefined
    if (typeof v === 'string' || Array.isArray(v)) return /^\d+$/.test(String(k)) ? v[Number(k)] : undefined
    return Object.hasOwn(v, k as string) ? v[k as string] : undefined
  }

  const key = (p: Node, depth: number) => {
    const k = p.key as Node
    const v = p.computed ? value(k, depth + 1) : (k.name ?? k.value)
    return typeof v === 'string' || typeof v === 'number' ? String(v) : undefined
  }

  /** The string a constant expression evaluates to (numbers as strings), or undefined when it is not constant. */
  const fold = (node: Node): string | undefined => {
    budget = BUDGET
    const v = value(node, 0)
    return typeof v === 'string' || typeof v === 'number' ? String(v) : undefined
  }

  /** `obj.name` or `obj[key]`: the property's name, or undefined when it cannot be known. */
  const memberName = (member: Node): string | undefined => {
    const prop = member.property as Node
    return member.computed ? fold(prop) : (prop.name as string | undefined)
  }

  return { fold, memberName }
}
