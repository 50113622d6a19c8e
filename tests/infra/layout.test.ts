import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

/**
 * The folder rule (README "Layout"): a family's own code lives in `functions/<family>/`; `lib/` holds only what
 * two or more families import, and never imports a family. Read from the import graph of the sources.
 */
const root = resolve(__dirname, '../..')
const sources = (dir: string): string[] =>
  readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  )
const IMPORT = /(?:from\s+|import\s*\(\s*|import\s+)['"](\.{1,2}\/[^'"]+)['"]/g

function resolveImport(from: string, spec: string): string | null {
  const base = resolve(root, dirname(from), spec)
  for (const candidate of [base, `${base}.ts`, join(base, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return relative(root, candidate)
  }
  return null
}

const files = [...sources('functions'), ...sources('lib')]
const imports = new Map(
  files.map((f) => {
    const text = readFileSync(join(root, f), 'utf8')
    return [f, [...text.matchAll(IMPORT)].flatMap((m) => resolveImport(f, m[1]) ?? [])] as const
  }),
)
const familyOf = (f: string) => f.match(/^functions\/([^/]+)\//)?.[1] ?? null

/** The lib modules a family's own files reach, following imports through lib/ (another family's files are theirs). */
function libReachedBy(family: string): Set<string> {
  const seen = new Set<string>()
  const stack = files.filter((f) => familyOf(f) === family)
  while (stack.length) {
    for (const dep of imports.get(stack.pop()!) ?? []) {
      if (!dep.startsWith('lib/') || seen.has(dep)) continue
      seen.add(dep)
      stack.push(dep)
    }
  }
  return seen
}

describe('the folder rule', () => {
  it('lib/ never imports a family (the typed client names the apps’ types only)', () => {
    const inverted = files
      .filter((f) => f.startsWith('lib/') && f !== 'lib/client.ts')
      .flatMap((f) => (imports.get(f) ?? []).filter((d) => d.startsWith('functions/')).map((d) => `${f} → ${d}`))
    expect(inverted).toEqual([])
  })

  it('a family imports no other family’s files: what two share lives in lib/', () => {
    const crossing = files
      .filter((f) => familyOf(f) && familyOf(f) !== 'docs')
      .flatMap((f) => (imports.get(f) ?? []).filter((d) => familyOf(d) && familyOf(d) !== familyOf(f)).map((d) => `${f} → ${d}`))
    expect(crossing).toEqual([])
  })

  it('every lib/ module that a family uses is used by at least two', () => {
    const families = [...new Set(files.map(familyOf).filter((f): f is string => !!f))]
    const users = new Map<string, string[]>()
    for (const family of families) for (const mod of libReachedBy(family)) users.set(mod, [...(users.get(mod) ?? []), family])
    const single = [...users].filter(([, by]) => by.length === 1).map(([mod, by]) => `${mod} (only ${by[0]})`)
    expect(single).toEqual([])
  })
})
