import { isWrapper, type Node, unwrap } from './ast'
import type { folder, Names } from './names'

/**
 * What code can reach that runs other code or loads modules: the global object, `eval` and `Function`, the module
 * loaders (`require`, dynamic `import()`, `process.getBuiltinModule`, `module.require`, `createRequire`,
 * `Module._load`), `process`, `Deno`, `Bun`, string timers. Each is followed from where the program names it (a
 * global, or a `const` holding one) through what is done with it: a member read by a written name, a call, a
 * comparison. Whatever the scanner cannot follow (a computed name it cannot read, a `let`, `var`, parameter,
 * property, argument or return value holding it) blocks the skill: what cannot be proved is not allowed.
 */

/** A capability the program holds, named as its messages name it. */
type Kind = 'the global object' | 'Function' | 'Function.prototype' | 'a module loader' | 'createRequire' | 'process' | 'module' | 'the module system' | 'a timer' | 'Deno' | 'Bun' | 'node:process' | 'node:module' | 'import(process)' | 'import(module)'
/** What a step leads to: a capability, nothing to follow (null), a reason to block ({ r }), or a use that cannot be followed (false). */
export type Outcome = Kind | null | false | { r: string }

export const R = {
  eval: 'Uses eval',
  fn: 'Builds code from a string (Function constructor)',
  ctor: 'Reaches the Function constructor through .constructor',
  native: 'Reaches native bindings (process.binding or dlopen)',
  main: 'Reaches the main module (process.mainModule)',
  exec: 'Runs programs (child_process)',
  timer: 'Passes a string of code to a timer (setTimeout/setInterval)',
  wasm: 'Runs WebAssembly (code the scanner cannot read)',
  hiddenGlobal: 'Hides the name of a global behind a computed key',
  stack: 'Reaches call-site internals (Error.prepareStackTrace)',
} as const


/** Globals that are capabilities, by name. */
export const GLOBALS: Record<string, Outcome> = {
  globalThis: 'the global object',
  window: 'the global object',
  self: 'the global object',
  global: 'the global object',
  top: 'the global object',
  parent: 'the global object',
  frames: 'the global object',
  eval: { r: R.eval },
  execScript: { r: R.eval },
  Function: 'Function',
  WebAssembly: { r: R.wasm },
  require: 'a module loader',
  process: 'process',
  module: 'module',
  setTimeout: 'a timer',
  setInterval: 'a timer',
  setImmediate: 'a timer',
  Deno: 'Deno',
  Bun: 'Bun',
}

/** The capability a global name is, if any (own keys only: `constructor` is not a global here). */
export const globalNamed = (name: string): Outcome | undefined => (Object.hasOwn(GLOBALS, name) ? GLOBALS[name] : undefined)

const PLAIN_MODULE = new Set(['builtinModules', 'isBuiltin', 'filename', 'id', 'path', 'paths', 'loaded', 'exports'])

/** `kind.name`: where reading a member by its written name leads. */
export function member(kind: Kind, name: string): Outcome {
  switch (kind) {
    case 'the global object':
      return globalNamed(name) ?? null
    case 'Function':
      return name === 'prototype' ? 'Function.prototype' : name === 'name' || name === 'length' ? null : { r: R.fn }
    case 'a module loader':
      return name === 'resolve' ? null : name === 'main' ? 'the module system' : false
    case 'process':
      if (name === 'getBuiltinModule') return 'a module loader'
      if (name === 'binding' || name === '_linkedBinding' || name === 'dlopen') return { r: R.native }
      return name === 'mainModule' ? { r: R.main } : name === 'execve' ? { r: R.exec } : null
    case 'module':
      return name === 'require' ? 'a module loader' : name === 'constructor' || name === 'parent' || name === 'children' ? 'the module system' : null
    case 'the module system':
      if (name === 'createRequire') return 'createRequire'
      if (name === '_load' || name === 'require') return 'a module loader'
      return name === 'constructor' ? 'the module system' : PLAIN_MODULE.has(name) ? null : false
    case 'Deno':
      return name === 'run' || name === 'Command' ? { r: R.exec } : null
    case 'Bun':
      return name === 'spawn' || name === 'spawnSync' || name === '$' ? { r: R.exec } : null
    case 'node:process':
      return name === 'default' ? 'process' : member('process', name)
    case 'node:module':
      return name === 'default' ? 'the module system' : member('the module system', name)
    case 'createRequire':
    case 'a timer': // setTimeout.call(null, code) is the timer under another name
    case 'import(process)':
    case 'import(module)':
      return false
    default:
      return null // Function.prototype.call, setTimeout.name...
  }
}

/** The capability a loaded module is: `process` and `module` are; every other module is a plain value. */
const moduleKind = (name: string | undefined, imported: boolean): Outcome => {
  const bare = name?.replace(/^node:/, '')
  if (bare === 'process') return imported ? 'import(process)' : 'process'
  if (bare === 'module') return imported ? 'import(module)' : 'the module system'
  return null
}

export const isKind = (o: Outcome | undefined): o is Kind => typeof o === 'string'

export function reach(names: Names, fold: ReturnType<typeof folder>, f: { reason(m: string): void }, checkModule: (source: Node | undefined) => string | undefined) {
  const hidden = (kind: Kind) => (kind === 'the global object' ? R.hiddenGlobal : `Hides which part of ${kind} it uses behind a computed key`)
  const handedOn = (kind: Kind) => (kind === 'Function' ? R.fn : `Hands ${kind} to code the scanner cannot follow (a let or var, a parameter, a property, an argument)`)
  const emit = (o: Outcome, from: Kind) => {
    if (o === false) f.reason(`Reaches into ${from} beyond what the scanner can follow`)
    else if (o && typeof o === 'object') f.reason(o.r)
  }

  /** What calling a capability gives (`require('x')`: the module, checked; `createRequire(url)`: a loader). */
  function call(kind: Kind, args: Node[]): Outcome {
    if (kind === 'Function') return { r: R.fn }
    if (kind === 'createRequire') return 'a module loader'
    if (kind === 'a module loader') return moduleKind(checkModule(args[0]), false)
    if (kind === 'a timer') {
      const a = args[0] && unwrap(args[0])
      const stringish = a && (fold.fold(a) !== undefined || a.type === 'TemplateLiteral' || (a.type === 'BinaryExpression' && a.operator === '+'))
      return stringish ? { r: R.timer } : null
    }
    return null
  }

  /** The capability an expression evaluates to, when it is one: followed through `const` names and imports. */
  function rootOf(raw: Node, depth = 0): Outcome | undefined {
    if (depth > 20) return undefined
    const n = unwrap(raw)
    switch (n.type) {
      case 'Identifier': {
        const b = names.refs.get(n)
        if (b === null) return globalNamed(n.name as string)
        if (b?.kind === 'import' && b.source) {
          const ns = moduleKind(fold.fold(b.source), false)
          const kind = ns === 'process' ? 'node:process' : ns === 'the module system' ? 'node:module' : undefined
          return kind && (b.imported === '*' ? kind : member(kind, b.imported!))
        }
        if (b?.kind !== 'const' || !b.init) return undefined
        let o = rootOf(b.init, depth + 1)
        for (const k of b.path) {
          if (!isKind(o)) return o
          const name = k === null ? undefined : typeof k === 'number' ? String(k) : fold.fold(k)
          if (name === undefined) return undefined // reported where the pattern took it
          o = member(o, name)
        }
        return o
      }
      case 'ThisExpression':
        return names.globalThis.has(n) ? 'the global object' : undefined
      case 'MemberExpression': {
        const o = rootOf(n.object as Node, depth + 1)
        const name = fold.memberName(n)
        return isKind(o) && name !== undefined ? member(o, name) : undefined
      }
      case 'CallExpression':
      case 'NewExpression': {
        const o = rootOf(n.callee as Node, depth + 1)
        if (o === 'createRequire') return 'a module loader'
        return o === 'a module loader' ? moduleKind(fold.fold((n.arguments as Node[])[0] ?? { type: 'Identifier' }), false) : undefined
      }
      case 'ImportExpression':
        return moduleKind(fold.fold(n.source as Node), true)
      case 'AwaitExpression': {
        const o = rootOf(n.argument as Node, depth + 1)
        return o === 'import(process)' ? 'node:process' : o === 'import(module)' ? 'node:module' : o
      }
      case 'ConditionalExpression':
        return rootOf(n.consequent as Node, depth + 1) ?? rootOf(n.alternate as Node, depth + 1)
      case 'LogicalExpression':
        return rootOf(n.left as Node, depth + 1) ?? rootOf(n.right as Node, depth + 1)
      default:
        return undefined
    }
  }

  /** `const { a, b: { c } } = <capability>`: each name taken is followed as what it holds; `let` and `var` cannot be. */
  function destructure(pattern: Node, kind: Kind, isConst: boolean) {
    if (pattern.type !== 'ObjectPattern') return f.reason(handedOn(kind))
    for (const prop of pattern.properties as Node[]) {
      if (prop.type === 'RestElement') {
        f.reason(handedOn(kind))
        continue
      }
      const key = prop.key as Node
      const name = prop.computed ? fold.fold(key) : ((key.name ?? key.value) as string)
      if (name === undefined) {
        f.reason(hidden(kind))
        continue
      }
      const o = member(kind, name)
      let value = prop.value as Node
      if (value.type === 'AssignmentPattern') value = value.left as Node
      if (!isKind(o)) emit(o, kind)
      else if (value.type === 'ObjectPattern') destructure(value, o, isConst)
      else if (!isConst || value.type !== 'Identifier') f.reason(handedOn(o))
    }
  }

  /**
   * `fetch.bind(globalThis)`: the global object as the `this` of a global function (one that is no capability
   * itself), the idiom that keeps `fetch` callable on its own. Nothing else may take the global object as an argument.
   */
  function boundToGlobal(call: Node, arg: Node, kind: Kind) {
    const callee = unwrap(call.callee as Node)
    if (kind !== 'the global object' || (call.arguments as Node[])[0] !== arg || callee.type !== 'MemberExpression' || !/^(?:bind|call|apply)$/.test(fold.memberName(callee) ?? '')) return false
    const fn = unwrap(callee.object as Node)
    if (fn.type === 'Identifier') return names.refs.get(fn) === null && globalNamed(fn.name as string) === undefined
    return fn.type === 'MemberExpression' && rootOf(fn) === null && rootOf(fn.object as Node) === 'the global object'
  }

  /** Follows a capability from `start` up through what the program does with it. */
  function follow(start: Node, first: Outcome) {
    let node = start
    let o = first
    for (let steps = 0; steps < 100; steps++) {
      if (o === null || o === false) return // false: reported where the name was bound
      if (!isKind(o)) return f.reason(o.r)
      const kind: Kind = o
      const up = names.parents.get(node)
      if (!up) return
      const [p, key] = up
      if (key === 'test' || p.type === 'ExpressionStatement' || p.type === 'UnaryExpression' || p.type === 'BinaryExpression') return
      if (isWrapper(p) || p.type === 'SequenceExpression' || p.type === 'ConditionalExpression' || p.type === 'LogicalExpression') {
        node = p
        continue
      }
      switch (p.type) {
        case 'MemberExpression': {
          if (key !== 'object') return // `x[globalThis]` only makes a string of it
          const name = fold.memberName(p)
          if (name === undefined) return f.reason(hidden(kind))
          o = member(kind, name)
          if (o === false) return emit(o, kind)
          break
        }
        case 'CallExpression':
        case 'NewExpression':
          if (key !== 'callee') return boundToGlobal(p, node, kind) ? undefined : f.reason(handedOn(kind))
          o = call(kind, p.arguments as Node[])
          break
        case 'TaggedTemplateExpression':
          o = call(kind, [p.quasi as Node])
          break
        case 'AwaitExpression':
          o = kind === 'import(process)' ? 'node:process' : kind === 'import(module)' ? 'node:module' : kind
          break
        case 'VariableDeclarator': {
          const isConst = (names.parents.get(p)?.[0].kind ?? '') === 'const'
          const id = p.id as Node
          // An exported name leaves what the scanner sees (`export const r = require`, a TypeScript namespace's member).
          const exported = names.parents.get(names.parents.get(p)![0])?.[0].type === 'ExportNamedDeclaration'
          if (id.type === 'Identifier') return isConst && !exported ? undefined : f.reason(handedOn(kind))
          return destructure(id, kind, isConst)
        }
        case 'AssignmentExpression':
          return key === 'right' && /Pattern$/.test((p.left as Node).type) ? destructure(p.left as Node, kind, false) : f.reason(handedOn(kind))
        default:
          return f.reason(handedOn(kind))
      }
      node = p
    }
  }

  return { rootOf, follow }
}
