import { Parser, type Options } from 'acorn'
import { tsPlugin } from '@sveltejs/acorn-typescript'
import { type Findings, GLOBAL_OBJECTS, looksLikeSecret, SECRET_NAME } from './findings'
import { scanShellText } from './scan-text'

/**
 * The scanner's JavaScript and TypeScript rules, on a syntax tree (acorn; TypeScript through
 * @sveltejs/acorn-typescript), so a name is judged by what it is in the program, not by where its letters happen
 * to appear: `regex.exec(s)` is not a child process, `"eval"` in a sentence is not eval, and
 * `globalThis['ev' + 'al']` is. Constant strings are folded (literals, `+`, templates, `String.fromCharCode`,
 * `[...].join`, `atob`, `const` names), so a name assembled from pieces is read whole.
 */

type Node = { type: string; [key: string]: unknown }

const OPTIONS: Options = {
  ecmaVersion: 'latest',
  allowHashBang: true,
  allowReturnOutsideFunction: true,
  allowAwaitOutsideFunction: true,
  allowImportExportEverywhere: true,
  locations: true, // the TypeScript plugin needs them
}
const TsParser = Parser.extend(tsPlugin())

/**
 * The program's syntax tree, or null when it is not JavaScript or TypeScript: plain acorn first (as a module, then
 * as a script: sloppy-mode code such as `with` only parses as one), then the TypeScript parser.
 */
export function parseProgram(code: string): Node | null {
  for (const parse of [
    () => Parser.parse(code, { ...OPTIONS, sourceType: 'module' }),
    () => Parser.parse(code, { ...OPTIONS, sourceType: 'script' }),
    () => TsParser.parse(code, { ...OPTIONS, sourceType: 'module' }),
  ]) {
    try {
      return parse() as unknown as Node
    } catch {
      // next parser
    }
  }
  return null
}

const isNode = (v: unknown): v is Node => typeof v === 'object' && v !== null && typeof (v as Node).type === 'string'

/**
 * Every node of the tree with its parent and the key it hangs under, whatever its type (TypeScript's included:
 * a generic walk cannot skip a child a type-specific walker does not know). Iterative: nesting depth is free.
 */
function walk(root: Node, visit: (node: Node, parent: Node | null, key: string) => void) {
  const stack: Array<[Node, Node | null, string]> = [[root, null, '']]
  while (stack.length) {
    const [node, parent, key] = stack.pop()!
    visit(node, parent, key)
    for (const k of Object.keys(node)) {
      if (k === 'loc') continue
      const v = node[k]
      if (Array.isArray(v)) for (const c of v) isNode(c) && stack.push([c, node, k])
      else if (isNode(v)) stack.push([v, node, k])
    }
  }
}

/** Expression wrappers that change nothing at run time (parentheses, `?.` chains, TypeScript casts). */
function unwrap(node: Node): Node {
  let n = node
  for (;;) {
    if (n.type === 'ChainExpression' || n.type === 'ParenthesizedExpression' || n.type.startsWith('TS')) {
      const inner = (n.expression ?? null) as Node | null
      if (!inner || !isNode(inner)) return n
      n = inner
    } else if (n.type === 'SequenceExpression') {
      n = (n.expressions as Node[]).at(-1)!
    } else return n
  }
}

const DANGEROUS_MODULES: Record<string, { reason?: string; warning?: string }> = {
  child_process: { reason: 'Runs programs (child_process)' },
  vm: { reason: 'Evaluates code (vm)' },
  worker_threads: { warning: 'Starts threads (worker_threads)' },
  cluster: { warning: 'Starts processes (cluster)' },
  fs: { warning: 'Accesses the file system (fs)' },
  'fs/promises': { warning: 'Accesses the file system (fs)' },
  net: { warning: 'Opens raw network sockets (net, dgram or tls)' },
  dgram: { warning: 'Opens raw network sockets (net, dgram or tls)' },
  tls: { warning: 'Opens raw network sockets (net, dgram or tls)' },
  module: { warning: 'Loads modules by path (module)' },
}

// Names that, reached by a computed key, are a way around the rules on their plain use.
const HIDDEN_NAMES: Record<string, string> = {
  eval: 'Uses eval',
  Function: 'Builds code from a string (Function constructor)',
  constructor: 'Reaches the Function constructor through .constructor',
  require: 'Loads a module whose name is hidden',
  child_process: 'Runs programs (child_process)',
  exec: 'Runs programs (child_process)',
  execSync: 'Runs programs (child_process)',
  spawn: 'Runs programs (child_process)',
  spawnSync: 'Runs programs (child_process)',
  execFile: 'Runs programs (child_process)',
  execFileSync: 'Runs programs (child_process)',
  fork: 'Runs programs (child_process)',
  binding: 'Reaches native bindings (process.binding or dlopen)',
  dlopen: 'Reaches native bindings (process.binding or dlopen)',
  mainModule: 'Reaches the main module (process.mainModule)',
  'node:child_process': 'Runs programs (child_process)',
}

// Where a bare `Function` is passed on as a value.
const FUNCTION_ALIASING = new Set([
  'VariableDeclarator.init',
  'AssignmentExpression.right',
  'Property.value',
  'ArrayExpression.elements',
  'CallExpression.arguments',
  'NewExpression.arguments',
  'TaggedTemplateExpression.tag',
  'ReturnStatement.argument',
  'ConditionalExpression.consequent',
  'ConditionalExpression.alternate',
  'LogicalExpression.left',
  'LogicalExpression.right',
])

const TIMERS = new Set(['setTimeout', 'setInterval', 'setImmediate', 'execScript'])
const ENV_HOLDERS = new Set(['process', 'Deno', 'Bun'])
// Calls that send data out; with environment access they can send secrets away.
const NETWORK_CALL = /(?:^|\.)(?:fetch|XMLHttpRequest|WebSocket|EventSource|sendBeacon)$|^axios(?:\.\w+)?$|^(?:https?|http2)\.(?:request|get|connect)$/

export function scanProgram(program: Node, f: Findings) {
  // `const NAME = <constant string>` anywhere: enough to fold `const a = 'ev'; globalThis[a + 'al']`.
  const constants = new Map<string, string>()
  // Names bound to the global object (`const g = globalThis`): `g.eval` is `globalThis.eval`.
  const globals = new Set(GLOBAL_OBJECTS)
  /** The global object, by its own name, an alias, or `this` (the global object at a script's top level). */
  const isGlobal = (n: Node) => (n.type === 'Identifier' && globals.has(n.name as string)) || n.type === 'ThisExpression'
  walk(program, (node, parent) => {
    if (node.type !== 'VariableDeclarator' || !isNode(node.id) || node.id.type !== 'Identifier' || !isNode(node.init)) return
    const init = unwrap(node.init)
    if ((init.type === 'Identifier' && GLOBAL_OBJECTS.has(init.name as string)) || init.type === 'ThisExpression') globals.add(node.id.name as string)
    if (parent?.kind === 'const') {
      const value = fold(node.init)
      if (value !== undefined) constants.set(node.id.name as string, value)
    }
  })

  /** The string a constant expression evaluates to, or undefined when it is not constant. */
  function fold(raw: Node, depth = 0): string | undefined {
    if (depth > 20) return undefined
    const node = unwrap(raw)
    switch (node.type) {
      case 'Literal':
        return typeof node.value === 'string' || typeof node.value === 'number' ? String(node.value) : undefined
      case 'Identifier':
        return constants.get(node.name as string)
      case 'TemplateLiteral': {
        const quasis = node.quasis as Node[]
        const parts = (node.expressions as Node[]).map((e) => fold(e, depth + 1))
        if (parts.some((p) => p === undefined)) return undefined
        return quasis.map((q, i) => String((q.value as { cooked: string | null }).cooked ?? '') + (parts[i] ?? '')).join('')
      }
      case 'BinaryExpression': {
        if (node.operator !== '+') return undefined
        const [l, r] = [fold(node.left as Node, depth + 1), fold(node.right as Node, depth + 1)]
        return l === undefined || r === undefined ? undefined : l + r
      }
      case 'CallExpression': {
        const callee = unwrap(node.callee as Node)
        const args = node.arguments as Node[]
        const name = calleeName(callee)
        if (name === 'String.fromCharCode') {
          const codes = args.map((a) => fold(a, depth + 1))
          return codes.every((c) => c !== undefined && /^\d+$/.test(c)) ? String.fromCharCode(...codes.map(Number)) : undefined
        }
        if (name === 'atob' && args.length === 1) {
          const s = fold(args[0], depth + 1)
          try {
            return s === undefined ? undefined : atob(s)
          } catch {
            return undefined
          }
        }
        if (callee.type === 'MemberExpression' && propertyName(callee) === 'join') {
          const target = unwrap(callee.object as Node)
          if (target.type !== 'ArrayExpression') return undefined
          const items = (target.elements as Array<Node | null>).map((e) => (e ? fold(e, depth + 1) : ''))
          const sep = args.length ? fold(args[0], depth + 1) : ','
          return items.some((i) => i === undefined) || sep === undefined ? undefined : items.join(sep)
        }
        return undefined
      }
      default:
        return undefined
    }
  }

  /** `obj.name` or `obj['name']` (folded): the property's name, or undefined when it cannot be known. */
  function propertyName(member: Node): string | undefined {
    const prop = member.property as Node
    if (!member.computed) return prop.type === 'Identifier' || prop.type === 'PrivateIdentifier' ? (prop.name as string) : undefined
    return fold(prop)
  }

  /**
   * What a call calls, as a name: `eval`, `setTimeout`, and the same through a global object (`window.eval`,
   * `globalThis['setTimeout']`); `Object.method` for a method of a named object (`String.fromCharCode`).
   */
  function calleeName(callee: Node): string | undefined {
    const c = unwrap(callee)
    if (c.type === 'Identifier') return c.name as string
    if (c.type !== 'MemberExpression') return undefined
    const prop = propertyName(c)
    if (prop === undefined) return undefined
    const obj = unwrap(c.object as Node)
    if (isGlobal(obj)) return prop
    if (obj.type === 'Identifier') return `${obj.name as string}.${prop}`
    if (obj.type === 'MemberExpression') {
      const inner = calleeName(obj)
      return inner ? `${inner}.${prop}` : `.${prop}`
    }
    return `.${prop}`
  }

  const checkModule = (source: Node | undefined) => {
    if (!source) return
    const name = fold(source)
    if (name === undefined) return f.reason('Loads a module whose name is computed')
    if (/^(?:data|blob):/i.test(name)) return f.reason('Imports code from a data: or blob: URL')
    if (/^https?:/i.test(name)) f.warning('Imports code from a URL', 'high')
    const rule = DANGEROUS_MODULES[name.replace(/^node:/, '')]
    if (rule?.reason) f.reason(rule.reason)
    if (rule?.warning) f.warning(rule.warning)
  }

  let readsEnv = false
  let usesNetwork = false
  let charCodeCalls = 0

  walk(program, (node, parent, key) => {
    switch (node.type) {
      case 'Identifier': {
        const name = node.name as string
        if (name === 'eval' && isReference(parent, key)) f.reason('Uses eval')
        // `Function` handed on (`const F = Function`, a tag, an argument) is the constructor under another name;
        // `x instanceof Function` and `Function.prototype` are not.
        if (name === 'Function' && parent && FUNCTION_ALIASING.has(`${parent.type}.${key}`)) f.reason('Builds code from a string (Function constructor)')
        break
      }
      case 'CallExpression':
      case 'NewExpression': {
        const callee = unwrap(node.callee as Node)
        const args = node.arguments as Node[]
        const name = calleeName(callee)
        if (name === 'eval' || name === 'execScript') f.reason('Uses eval')
        if (name === 'Function' || name === 'AsyncFunction' || name === 'GeneratorFunction') f.reason('Builds code from a string (Function constructor)')
        if (callee.type === 'MemberExpression' && propertyName(callee) === 'constructor' && args.length) f.reason('Reaches the Function constructor through .constructor')
        if (name && TIMERS.has(name) && args.length && isStringish(args[0])) f.reason('Passes a string of code to a timer (setTimeout/setInterval)')
        if (name === 'require' || name === 'module.require' || name === 'process.mainModule.require' || name?.endsWith('._load')) checkModule(args[0])
        if (name === 'process.binding' || name === 'process.dlopen' || name === 'process._linkedBinding') f.reason('Reaches native bindings (process.binding or dlopen)')
        if (name && /^(?:Deno\.(?:run|Command)|Bun\.(?:spawn|spawnSync|\$))$/.test(name)) f.reason('Runs programs (child_process)')
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
        if ((name === 'Reflect.get' || name === 'Object.getOwnPropertyDescriptor') && args.length >= 2) {
          const target = unwrap(args[0])
          const prop = fold(args[1])
          if (prop !== undefined && HIDDEN_NAMES[prop]) f.reason(HIDDEN_NAMES[prop])
          else if (prop === undefined && isGlobal(target) && target.type !== 'ThisExpression') f.reason('Hides the name of a global behind a computed key')
        }
        assembled(node)
        break
      }
      case 'TaggedTemplateExpression': {
        const tag = calleeName(node.tag as Node)
        if (tag === 'eval') f.reason('Uses eval')
        if (tag === 'Function') f.reason('Builds code from a string (Function constructor)')
        break
      }
      case 'ImportExpression':
        checkModule(node.source as Node)
        break
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
      case 'MemberExpression': {
        const obj = unwrap(node.object as Node)
        const prop = propertyName(node)
        if (node.computed) {
          const key = node.property as Node
          const hidden = prop !== undefined ? HIDDEN_NAMES[prop] : undefined
          if (hidden) f.reason(hidden)
          else if (obj.type === 'Identifier' && (globals.has(obj.name as string) || obj.name === 'process' || obj.name === 'require')) {
            // A global reached by a name the code assembles: there is no honest reason to hide which one.
            const k = unwrap(key)
            const written = k.type === 'Literal' || (k.type === 'TemplateLiteral' && !(k.expressions as Node[]).length)
            if (prop === undefined || !written) f.reason('Hides the name of a global behind a computed key')
          }
        } else if (isGlobal(obj) && (prop === 'eval' || prop === 'Function')) {
          f.reason(prop === 'eval' ? 'Uses eval' : 'Builds code from a string (Function constructor)')
        }
        if (obj.type === 'Identifier' && (obj.name === 'process' || obj.name === 'module') && prop === 'mainModule') f.reason('Reaches the main module (process.mainModule)')
        const envHolder = (obj.type === 'Identifier' && ENV_HOLDERS.has(obj.name as string)) || (obj.type === 'MetaProperty' && (obj.meta as Node).name === 'import')
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
        if (typeof node.value === 'string') scanStringValue(node.value)
        break
      case 'BinaryExpression':
      case 'TemplateLiteral':
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
        const init = isNode(node.init) ? unwrap(node.init) : null
        if (isNode(node.id) && node.id.type === 'ObjectPattern' && init?.type === 'Identifier' && ENV_HOLDERS.has(init.name as string)) {
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
        const name = left.type === 'Identifier' ? (left.name as string) : left.type === 'MemberExpression' ? propertyName(left) : undefined
        if (name) credential(name, node.right as Node)
        break
      }
      case 'Property':
      case 'PropertyDefinition': {
        const k = node.key as Node
        const name = !node.computed && k.type === 'Identifier' ? (k.name as string) : k.type === 'Literal' ? String(k.value) : undefined
        if (name && isNode(node.value)) credential(name, node.value)
        break
      }
    }
  })

  if (charCodeCalls >= 3) f.reason('Obfuscated code: String.fromCharCode chain')
  if (readsEnv && usesNetwork) f.warning('Reads environment variables and sends network requests: could send secrets away', 'high')

  /** A string value in the program: a module name that runs programs, or a command it may hand to a shell. */
  function scanStringValue(value: string) {
    if (value.replace(/^node:/, '') === 'child_process') f.reason('Runs programs (child_process)')
    if (value.length >= 6 && /[|<$]|\brm\s|\/dev\//.test(value)) scanShellText(value, f)
  }

  /** A string the code puts together from pieces (`'ev' + 'al'`, `[...].join('')`): judged by what it spells. */
  function assembled(node: Node) {
    const pieces =
      node.type === 'BinaryExpression' ||
      (node.type === 'TemplateLiteral' && (node.expressions as Node[]).length > 0) ||
      (node.type === 'CallExpression' && /^(?:String\.fromCharCode|atob|\.join)$/.test(calleeName(node.callee as Node) ?? ''))
    if (!pieces) return
    const value = fold(node)
    if (value !== undefined && HIDDEN_NAMES[value]) f.reason(HIDDEN_NAMES[value])
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

/** An Identifier under `key` of `parent` that reads a variable (not a property name, key or label). */
function isReference(parent: Node | null, key: string): boolean {
  if (!parent) return true
  if ((parent.type === 'MemberExpression' || parent.type === 'PropertyDefinition' || parent.type === 'MethodDefinition') && key === 'property' && !parent.computed) return false
  if ((parent.type === 'Property' || parent.type === 'PropertyDefinition' || parent.type === 'MethodDefinition') && key === 'key' && !parent.computed) return false
  if (key === 'label' || key === 'imported' || key === 'exported') return false
  return true
}

/** A timer argument that is a string of code rather than a function. */
function isStringish(arg: Node): boolean {
  const a = unwrap(arg)
  if (a.type === 'Literal') return typeof a.value === 'string'
  if (a.type === 'TemplateLiteral') return true
  if (a.type === 'BinaryExpression' && a.operator === '+') return isStringish(a.left as Node) || isStringish(a.right as Node)
  return false
}
