import { readFileSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { configurationTable, envExample } from '../../infra/gen-env-example'
import { configSchema } from '../../lib/config'

const root = new URL('../..', import.meta.url).pathname
const readme = readFileSync(join(root, 'README.md'), 'utf8')

/** Variables the runtime process of a local agent gets from its parent (infra/runtime), not settings of the platform. */
const RUNTIME_CHILD_ENV = ['AGENT_ID', 'GATEWAY_TOKEN', 'EXIT_WITH_PARENT', 'READY_DELAY_MS', 'RUNTIME_VERSION', 'PATH']

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : []
  })
}

/** Every variable the code reads: the config schema's keys, and `env.NAME` reads outside it (the local server's own). */
function variablesRead(): Set<string> {
  const read = new Set(Object.keys(configSchema.shape))
  for (const file of ['infra', 'lib', 'functions'].flatMap((d) => sources(join(root, d)))) {
    if (file.includes('/infra/runtime/')) continue
    // Code, not comments: a comment may name `process.env.NAME` as an example.
    const code = readFileSync(file, 'utf8').split('\n').filter((l) => !/^\s*(\/\/|\*|\/\*)/.test(l)).map((l) => l.replace(/\s\/\/ .*$/, '')).join('\n')
    for (const m of code.matchAll(/\benv\.([A-Z][A-Z0-9_]+)\b/g)) read.add(m[1])
  }
  for (const name of [...RUNTIME_CHILD_ENV, 'ASSETS']) read.delete(name) // ASSETS: a Worker binding, not a variable
  return read
}

describe('the README configuration table and .env.example list every variable the code reads', () => {
  const table = configurationTable(readme)
  const documented = new Set(table.flatMap((r) => r.names))

  it('every variable read is in the table, and every variable in the table is read', () => {
    const read = variablesRead()
    expect([...read].filter((n) => !documented.has(n)).sort(), 'read but not documented').toEqual([])
    expect([...documented].filter((n) => !read.has(n)).sort(), 'documented but never read').toEqual([])
  })

  it('each row has a default and a meaning', () => {
    for (const row of table) {
      expect(row.default, row.names.join(', ')).not.toBe('')
      expect(row.meaning, row.names.join(', ')).not.toBe('')
    }
  })

  it('.env.example is the table as generated (npm run gen:env)', () => {
    expect(readFileSync(join(root, '.env.example'), 'utf8')).toBe(envExample(readme))
  })
})
