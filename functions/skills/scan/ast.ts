import { Parser, type Options } from 'acorn'
import { tsPlugin } from '@sveltejs/acorn-typescript'

/** The scanner's syntax tree: acorn's ESTree nodes (TypeScript's through @sveltejs/acorn-typescript), read generically. */
export type Node = { type: string; [key: string]: unknown }

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

export const isNode = (v: unknown): v is Node => typeof v === 'object' && v !== null && typeof (v as Node).type === 'string'

/** The child nodes of `node` with the key each hangs under (`loc` aside), whatever the node's type. */
export function children(node: Node): Array<[Node, string]> {
  const out: Array<[Node, string]> = []
  for (const k of Object.keys(node)) {
    if (k === 'loc') continue
    const v = node[k]
    if (Array.isArray(v)) for (const c of v) isNode(c) && out.push([c, k])
    else if (isNode(v)) out.push([v, k])
  }
  return out
}

/**
 * Every node of the tree with its parent and the key it hangs under, whatever its type (TypeScript's included:
 * a generic walk cannot skip a child a type-specific walker does not know). Iterative: nesting depth is free.
 */
export function walk(root: Node, visit: (node: Node, parent: Node | null, key: string) => void) {
  const stack: Array<[Node, Node | null, string]> = [[root, null, '']]
  while (stack.length) {
    const [node, parent, key] = stack.pop()!
    visit(node, parent, key)
    for (const [c, k] of children(node)) stack.push([c, node, k])
  }
}

/** Whether `node` only changes the type of what it wraps (parentheses, `?.` chains, TypeScript casts). */
export const isWrapper = (node: Node) => node.type === 'ChainExpression' || node.type === 'ParenthesizedExpression' || (node.type.startsWith('TS') && isNode(node.expression))

/** Expression wrappers that change nothing at run time (parentheses, `?.` chains, TypeScript casts, `(0, x)`). */
export function unwrap(node: Node): Node {
  let n = node
  for (;;) {
    if (isWrapper(n)) n = n.expression as Node
    else if (n.type === 'SequenceExpression') n = (n.expressions as Node[]).at(-1)!
    else return n
  }
}

/** An Identifier under `key` of `parent` that reads a variable (not a property name, key, label or `import.meta`). */
export function isReference(parent: Node | null, key: string): boolean {
  if (!parent) return true
  if ((parent.type === 'MemberExpression' || parent.type === 'PropertyDefinition' || parent.type === 'MethodDefinition') && key === 'property' && !parent.computed) return false
  if ((parent.type === 'Property' || parent.type === 'PropertyDefinition' || parent.type === 'MethodDefinition') && key === 'key' && !parent.computed) return false
  if (parent.type === 'MetaProperty' || parent.type === 'TSEnumMember') return false
  if (key === 'label' || key === 'imported' || key === 'exported') return false
  return true
}
