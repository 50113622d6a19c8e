import { type Findings, looksLikeSecret, SECRET_NAME } from './findings'
import { isNode, isReference, type Node, unwrap, walk } from './ast'
import { folder, resolveNames } from './names'
import { R, reach } from './reach'
import { scanShellText } from './text'

export { parseProgram } from './ast'

/**
 * The scanner's JavaScript and TypeScript rules, on a syntax tree (functions/skills/scan/ast.ts), so a name is judged
 * by what it is in the program, not by where its letters happen to appear: `regex.exec(s)` is not a child
 * process, `"eval"` in a sentence is not eval, and `globalThis['ev' + 'al']` is. Names are resolved
 * (functions/skills/scan/names.ts) and constant strings folded, so a name assembled from pieces is read whole. What
 * runs code or loads modules is followed from where the program names it (functions/skills/scan/reach.ts): whatever
 * the scanner cannot resolve statically there blocks the skill.
 */

const DANGEROUS_MODULES: Record<string, { reason?: string; warning?: string }> = {
  child_process: { reason: 'Runs programs (child_process)' },
  vm: { reason: 'Evaluates code (vm)' },
  inspector: { reason: 'Evaluates code (inspector or repl)' },
  'inspector/promises': { reason: 'Evaluates code (inspector or repl)' },
  repl: { reason: 'Evaluates code (inspector or repl)' },
  worker_threads: { warning: 'Starts threads (worker_threads)' },
  cluster: { warning: 'Starts processes (cluster)' },
  fs: { warning: 'Accesses the file system (fs)' },
  'fs/promises': { warning: 'Accesses the file system (fs)' },
  net: { warning: 'Opens raw network sockets (net, dgram or tls)' },
  dgram: { warning: 'Opens raw network sockets (net, dgram or tls)' },
  tls: { warning: 'Opens raw network sockets (net, dgram or tls)' },
  module: { warning: 'Loads modules by path (module)' },
}

const PROTO = 'Walks up the prototype chain (__proto__ or getPrototypeOf)'
// Names that, reached by a computed key or assembled from pieces, are a way around the rules on their plain use.
const HIDDEN_NAMES: Record<string, string> = {
  eval: R.eval,
  Function: R.fn,
  constructor: R.ctor,
  ['__proto__']: PROTO, // computed: a plain `__proto__:` would set the object's prototype
  require: 'Loads a module whose name is hidden',
  getBuiltinModule: 'Loads a module whose name is hidden',
  child_process: R.exec,
  exec: R.exec,
  execSync: R.exec,
  spawn: R.exec,
  spawnSync: R.exec,
  execFile: R.exec,
  execFileSync: R.exec,
  fork: R.exec,
  binding: R.native,
  dlopen: R.native,
  mainModule: R.main,
  'node:child_process': R.exec,
}
const hiddenName = (name: string | undefined) => (name !== undefined && Object.hasOwn(HIDDEN_NAMES, name) ? HIDDEN_NAMES[name] : undefined)
// Names a program only passes around as strings to reach what they name (`Reflect.get(f, 'constructor')`).
const REACHING_STRINGS = new Set(['constructor', '__proto__', 'getBuiltinModule', 'prepareStackTrace'])

// Calls that send data out; with environment access they can send secrets away.
const NETWORK_CALL = /(?:^|\.)(?:fetch|XMLHttpRequest|WebSocket|EventSource|sendBeacon)$|^axios(?:\.\w+)?$|^(?:https?|http2)\.(?:request|get|connect)$/
// Capitalised globals that are not functions: a property of one is not one step from the Function constructor.
const NAMESPACES = new Set(['Math', 'JSON', 'Reflect', 'Intl', 'Atomics', 'WebAssembly'])
const COMPARISON = /^(?:[!=]==?|instanceof|in)$/

export function scanProgram(program: Node, f: Findings) {
  const names = resolveNames(program)
  const folded = folder(names)
  const { fold, memberName } = folded
  const { rootOf, follow } = reach(names, folded, f, checkModule)
  const parentOf = (n: Node) => names.parents.get(n)

  /**
   * What a call calls, as a name: `fetch`, and the same through the global object (`window.fetch`,
   * `globalThis['fetch']`); `Object.method` for a method of a named object (`String.fromCharCode`).
   */
  function calleeName(callee: Node): string | undefined {
    const c = unwrap(callee)
    if (c.type === 'Identifier') return c.name as string
    if (c.type !== 'MemberExpression') return undefined
    const prop = memberName(c)
    if (prop === undefined) return undefined
    const obj = unwrap(c.object as Node)
    if (rootOf(obj) === 'the global object') return prop
    if (obj.type === 'Identifier') return `${obj.name as string}.${prop}`
    if (obj.type === 'MemberExpression') {
      const inner = calleeName(obj)
      return inner ? `${inner}.${prop}` : `.${prop}`
    }
    return `.${prop}`
  }

  /** A module a program loads, by a name it writes: judged by that name. Answers the name (undefined: computed). */
  function checkModule(source: Node | undefined) {
    if (!source) return undefined
    const name = fold(source)
    if (name === undefined) return void f.reason('Loads a module whose name is computed')
    if (/^(?:data|blob):/i.test(name)) f.reason('Imports code from a data: or blob: URL')
    if (/^https?:/i.test(name)) f.warning('Imports code from a URL', 'high')
    const bare = name.replace(/^node:/, '')
    if (bare === 'worker_threads') loadsWorkers = true
    const rule = DANGEROUS_MODULES[bare]
    if (rule?.reason) f.reason(rule.reason)
    if (rule?.warning) f.warning(rule.warning)
    return name
  }

  /** Whether `node`'s value is only compared (`x.constructor === Object`, `key === '__proto__'`). */
  const compared = (node: Node) => {
    const [p, key] = parentOf(node) ?? [null, '']
    return (p?.type === 'BinaryExpression' && COMPARISON.test(p.operator as string)) || (p?.type === 'SwitchCase' && key === 'test')
  }

  /** An array literal only ever asked whether it holds a key: a guard list such as `['__proto__', 'constructor']`. */
  function guardList(array: Node): boolean {
    const [p, key] = parentOf(array) ?? [null, '']
    if (p?.type === 'MemberExpression' && key === 'object') return /^(?:includes|indexOf|lastIndexOf)$/.test(memberName(p) ?? '')
    if (p?.type === 'NewExpression' && key === 'arguments') return calleeName(p.callee as Node) === 'Set'
    if (p?.type !== 'VariableDeclarator' || parentOf(p)?.[0].kind !== 'const' || (p.id as Node).type !== 'Identifier') return false
    const b = [...names.refs].filter(([, binding]) => binding?.init === array)
    return b.every(([ref]) => {
      const [rp, rk] = parentOf(ref) ?? [null, '']
      return rp?.type === 'MemberExpression' && rk === 'object' && /^(?:includes|indexOf|lastIndexOf)$/.test(memberName(rp) ?? '')
    })
  }

  /** The expression a `const` name holds (followed through names), or the expression itself. */
  const held = (raw: Node, depth = 0): Node => {
    const n = unwrap(raw)
    const b = n.type === 'Identifier' ? names.refs.get(n) : undefined
    return b?.kind === 'const' && b.init && !b.path.length && depth < 20 ? held(b.init, depth + 1) : n
  }
  /** `x[key]` with a key the scanner cannot read, here or behind a `const`. */
  const dynamic = (raw: Node) => {
    const n = held(raw)
    return n.type === 'MemberExpression' && n.computed === true && memberName(n) === undefined
  }
  /** What a call through such a member returns. */
  const dynamicCall = (raw: Node) => {
    const n = held(raw)
    return (n.type === 'CallExpression' || n.type === 'NewExpression') && dynamic(n.callee as Node)
  }
  /** A function for certain: a function or class literal, a declared one, or a global constructor (`Object`, not `Math`). */
  const isFunction = (raw: Node) => {
    const n = held(raw)
    if (/^(?:Arrow)?Function(?:Expression)?$|^ClassExpression$/.test(n.type)) return true
    const b = n.type === 'Identifier' ? names.refs.get(n) : undefined
    return b === null ? /^[A-Z]/.test(n.name as string) && !NAMESPACES.has(n.name as string) : b?.kind === 'function' || b?.kind === 'class'
  }

  let readsEnv = false
  let evalOption = false
  let loadsWorkers = false
  let usesNetwork = false
  let charCodeCalls = 0

  walk(program, (node, parent, key) => {
    switch (node.type) {
      case 'Identifier': {
        if ((node.name as string) === 'eval' && isReference(parent, key)) f.reason(R.eval)
        if (!names.refs.has(node)) break
        const o = rootOf(node)
        if (o !== undefined && o !== null) follow(node, o)
        break
      }
      case 'ThisExpression':
        if (names.globalThis.has(node)) follow(node, 'the global object')
        break
      case 'WithStatement':
        f.reason('Uses with: the names inside it cannot be resolved')
        break
      case 'CallExpression':
      case 'NewExpression': {
        const callee = unwrap(node.callee as Node)
        const args = node.arguments as Node[]
        const name = calleeName(callee)
        if (name === 'AsyncFunction' || name === 'GeneratorFunction' || name === 'AsyncGeneratorFunction') f.reason(R.fn)
        if ((name === 'Object.getPrototypeOf' || name === 'Reflect.getPrototypeOf') && !compared(node)) f.reason(PROTO)
        if (name === 'String.fromCharCode') {
          charCodeCalls++
          if (args.length > 4 || args.some((a) => a.type === 'SpreadElement')) f.reason('Obfuscated code: String.fromCharCode chain')
          else f.warning('Builds strings from character codes (String.fromCharCode)')
        }
        if (name === 'String.fromCharCode.apply') f.reason('Obfuscated code: String.fromCharCode chain')
        if ((name === 'atob' || name === 'Buffer.from') && args.length) {
          const s = fold(args[0])
          const base64 = name === 'atob' || (args[1] && fold(args[1]) === 'base64')
          if (base64 && s !== undefined && s.length >= 32) f.reason('Obfuscated code: decodes a long base64 string (atob)')
        }
        if ((name === 'unescape' || name === 'decodeURIComponent') && args.length) {
          const s = fold(args[0])
          if (s !== undefined && (s.match(/%[0-9a-fA-F]{2}/g) ?? []).length >= 8) f.reason('Obfuscated code: run of \\x or \\u escapes')
        }
        if (name && NETWORK_CALL.test(name)) usesNetwork = true
        // `Reflect.get(f, 'constructor')`, `_.get(g, 'eval')`: a name handed over as a string is the name read.
        for (const a of args) {
          const s = a.type === 'SpreadElement' ? undefined : fold(a)
          if (s !== undefined && REACHING_STRINGS.has(s)) f.reason(hiddenName(s) ?? R.stack)
        }
        if (name && /^(?:Reflect\.get|Object\.getOwnPropertyDescriptor|Reflect\.getOwnPropertyDescriptor)$/.test(name) && args.length >= 2) {
          const hidden = hiddenName(fold(args[1]))
          if (hidden) f.reason(hidden)
        }
        // `x[a][b](code)`, and calling what `x[a](code)` returns: property names known only at run time, then called,
        // are how `.constructor` (then the Function constructor) is reached from data.
        const through = held(callee)
        if ((dynamic(through) && dynamic(through.object as Node)) || dynamicCall(callee)) {
          f.reason('Calls a function reached by property names the scanner cannot read (x[a][b](…) or x[a](…)(…))')
        }
        assembled(node)
        break
      }
      case 'ImportExpression': {
        checkModule(node.source as Node)
        const o = rootOf(node)
        if (o) follow(node, o)
        break
      }
      case 'ImportDeclaration':
      case 'ExportAllDeclaration':
      case 'ExportNamedDeclaration':
        if (isNode(node.source)) checkModule(node.source)
        break
      case 'TSImportEqualsDeclaration': {
        const ref = node.moduleReference as Node
        if (isNode(ref) && isNode(ref.expression)) checkModule(ref.expression)
        break
      }
      case 'ObjectPattern':
        for (const p of node.properties as Node[]) {
          if (p.type !== 'Property') continue
          const k = p.key as Node
          const name = p.computed ? fold(k) : ((k.name ?? k.value) as string)
          if (name === 'constructor' || name === '__proto__') f.reason(hiddenName(name)!)
        }
        break
      case 'MemberExpression': {
        const obj = unwrap(node.object as Node)
        const prop = memberName(node)
        if (node.computed) {
          const hidden = hiddenName(prop)
          if (hidden) f.reason(hidden)
          // A function's property under a name known only at run time: `constructor` is one step away.
          if (prop === undefined && isFunction(obj)) f.reason('Reads a property of a function by a name the scanner cannot read (how .constructor is reached)')
        }
        // `x.constructor` reached any way is the Function constructor one step on; only its name and comparisons are not.
        if (prop === 'constructor') {
          const [p, k] = parentOf(node) ?? [null, '']
          const named = p?.type === 'MemberExpression' && k === 'object' && !p.computed && memberName(p) === 'name'
          if (!named && !compared(node)) f.reason(R.ctor)
        }
        if (prop === '__proto__') f.reason(PROTO)
        if (prop === 'prepareStackTrace') f.reason(R.stack)
        if (obj.type === 'MetaProperty' && prop === 'require') follow(node, 'a module loader') // Bun's import.meta.require
        const holder = rootOf(obj)
        const envHolder = holder === 'process' || holder === 'Deno' || holder === 'Bun' || (obj.type === 'MetaProperty' && (obj.meta as Node).name === 'import')
        if (envHolder && prop === 'env') {
          readsEnv = true
          // `process.env.NAME` reads one variable; `process.env` handed on whole gives away every secret in it.
          const named = parent?.type === 'MemberExpression' && parent.object === node
          if (named) f.warning('Reads environment variables')
          else f.warning('Reads the whole environment (every variable)', 'high')
        }
        break
      }
      case 'Literal':
        if (typeof node.value === 'string') {
          scanStringValue(node.value)
          if (REACHING_STRINGS.has(node.value) && !passive(node, parent, key)) f.reason(hiddenName(node.value) ?? R.stack)
        }
        break
      case 'TemplateLiteral': {
        const quasis = node.quasis as Node[]
        const cooked = quasis.length === 1 ? (quasis[0].value as { cooked: string | null }).cooked : null
        if (cooked && REACHING_STRINGS.has(cooked) && !passive(node, parent, key)) f.reason(hiddenName(cooked) ?? R.stack)
        assembled(node)
        break
      }
      case 'BinaryExpression':
        assembled(node)
        break
      case 'TemplateElement': {
        const cooked = (node.value as { cooked: string | null }).cooked
        if (cooked) scanStringValue(cooked)
        break
      }
      case 'VariableDeclarator': {
        if (isNode(node.id) && node.id.type === 'Identifier' && isNode(node.init)) credential(node.id.name as string, node.init)
        // `const { env } = process`
        const holder = isNode(node.init) ? rootOf(node.init) : undefined
        if (isNode(node.id) && node.id.type === 'ObjectPattern' && (holder === 'process' || holder === 'Deno' || holder === 'Bun')) {
          const keys = (node.id.properties as Node[]).map((p) => (isNode(p.key) ? (p.key.name ?? p.key.value) : undefined))
          if (keys.includes('env')) {
            readsEnv = true
            f.warning('Reads environment variables')
          }
        }
        break
      }
      case 'AssignmentExpression': {
        const left = unwrap(node.left as Node)
        const name = left.type === 'Identifier' ? (left.name as string) : left.type === 'MemberExpression' ? memberName(left) : undefined
        if (name) credential(name, node.right as Node)
        break
      }
      case 'Property':
      case 'PropertyDefinition': {
        const k = node.key as Node
        const name = !node.computed && k.type === 'Identifier' ? (k.name as string) : k.type === 'Literal' ? String(k.value) : undefined
        if (name && isNode(node.value)) credential(name, node.value)
        if (name === 'eval' && (node.value as Node).value === true) evalOption = true
        break
      }
    }
  })

  // worker_threads' `new Worker(code, { eval: true })` runs a string, whatever name the class is given.
  if (evalOption && loadsWorkers) f.reason('Evaluates code (Worker with eval: true)')
  if (charCodeCalls >= 3) f.reason('Obfuscated code: String.fromCharCode chain')
  if (readsEnv && usesNetwork) f.warning('Reads environment variables and sends network requests: could send secrets away', 'high')

  /**
   * Where a string such as `'constructor'` only names something and reaches nothing: a written key, a comparison,
   * a `const` (its uses are judged where the name is folded in), a guard list, a TypeScript literal type.
   */
  function passive(node: Node, parent: Node | null, key: string): boolean {
    if (!parent || parent.type === 'TSLiteralType' || compared(node)) return true
    if (key === 'key' && !parent.computed) return true
    if (parent.type === 'VariableDeclarator') return parentOf(parent)?.[0].kind === 'const'
    return parent.type === 'ArrayExpression' && guardList(parent)
  }

  /** A string value in the program: a module name that runs programs, code in a data: URL, or a command for a shell. */
  function scanStringValue(value: string) {
    if (value.replace(/^node:/, '') === 'child_process') f.reason(R.exec)
    if (/^\s*data:(?:text|application)\/(?:java|ecma)script/i.test(value)) f.reason('Imports code from a data: or blob: URL')
    if (value.length >= 6 && /[|<$]|\brm\s|\/dev\//.test(value)) scanShellText(value, f)
  }

  /** A string the code puts together from pieces (`'ev' + 'al'`, `[...].join('')`, `'LAVE'.toLowerCase()`): judged by what it spells. */
  function assembled(node: Node) {
    const pieces = node.type !== 'TemplateLiteral' || (node.expressions as Node[]).length > 0
    const hidden = pieces ? hiddenName(fold(node)) : undefined
    if (hidden) f.reason(hidden)
  }

  /** `apiKey = '...'`: a hard-coded value under a credential's name. */
  function credential(name: string, value: Node) {
    if (!SECRET_NAME.test(name)) return
    const v = unwrap(value)
    if (v.type !== 'Literal' && v.type !== 'TemplateLiteral') return
    const s = fold(v)
    if (s !== undefined && looksLikeSecret(s)) f.reason(`Hard-coded credential in ${name}`)
  }
}
