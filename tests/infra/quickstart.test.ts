import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { type NpmStart, npmStart, npmStop, repoRoot } from '../support/npm-start'

/** The README's Quickstart shell block: the first ```bash fence after the `## Quickstart` heading, as written. */
function quickstartBlock(readme = readFileSync(join(repoRoot, 'README.md'), 'utf8')): { script: string; line: number } {
  const heading = readme.indexOf('\n## Quickstart\n')
  const open = readme.indexOf('\n```bash\n', heading)
  const close = readme.indexOf('\n```\n', open + 1)
  if (heading < 0 || open < 0 || close < 0) throw new Error('README: no ```bash block under "## Quickstart"')
  return { script: readme.slice(open + '\n```bash\n'.length, close + 1), line: readme.slice(0, open).split('\n').length + 1 }
}

/**
 * The newcomer's first minutes, as the README tells them: `npm start` on its defaults (only PATH and HOME from the
 * environment), then the Quickstart block run by bash as written, pointed at the started server by BASE and BACKEND.
 * Then the same data directory started again: the generated secrets are loaded, not made anew.
 */
describe('README Quickstart against npm start', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'quickstart-'))
  let server: NpmStart | undefined
  afterAll(async () => {
    if (server) await npmStop(server)
    rmSync(dataDir, { recursive: true, force: true })
  }, 30_000)

  it('the block sits in the README\'s first lines and uses only bash and curl', () => {
    const { script, line } = quickstartBlock()
    expect(line).toBeLessThanOrEqual(60)
    const tools = new Set(script.split('\n').flatMap((l) => [...l.replace(/#.*$/, '').matchAll(/(?:^|[|(;&{]|\$\()\s*([a-z][\w-]*)/g)].map((m) => m[1])))
    const shell = ['set', 'date', 'for', 'do', 'done', 'return', 'echo', 'sleep', 'seq', 'trap', 'rm', 'mktemp', 'grep', 'head', 'cut', 'true', 'if', 'then', 'fi']
    const defined = ['call', 'field', 'wait_for', 'running', 'answered']
    expect([...tools].filter((t) => !['curl', ...shell, ...defined].includes(t))).toEqual([])
  })

  it('runs as written: sign-up to a chat reply and the agent\'s logs; the start says where the inbox and the key are', async () => {
    server = await npmStart(dataDir)
    const banner = server.output()
    expect(banner).toContain(`mail         no provider: read it at ${server.web}/dev/mail`)
    expect(banner).toMatch(/^internal key ik_[\w-]{43} /m)
    expect(banner).toContain('admin        none: start with ADMIN_EMAILS=you@example.com')
    expect(banner).toMatch(/^runtimes {5}local processes whose chat answers by echoing/m)
    expect(banner).toMatch(/^secrets {6}generated .*INTERNAL_API_KEY/m)

    const run = spawnSync('bash', ['-c', quickstartBlock().script], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, BASE: server.web, BACKEND: server.backend },
      encoding: 'utf8',
      timeout: 120_000,
    })
    const said = `${run.stdout}\n${run.stderr}\n--- server ---\n${server.output().slice(-4000)}`
    expect(run.status, said).toBe(0)
    expect(run.stdout).toContain('Echo: Hello, agent')
    expect(run.stdout).toMatch(/^agent [0-9a-f-]{36} is running$/m)
    expect(run.stdout).toMatch(/^Quickstart done: dev-\d+-\d+@example\.com, agent [0-9a-f-]{36}$/m)
    const health = await (await fetch(`${server.backend}/health`)).json()
    expect(health.runtimes).toBe('local-processes')
  }, 180_000)

  it('a restart on the same data directory loads the generated secrets and prints the same internal key', async () => {
    expect(server).toBeDefined()
    const key = server!.output().match(/^internal key (\S+)/m)?.[1]
    expect(await npmStop(server!)).toBe(0)
    expect(statSync(join(dataDir, 'secrets', 'INTERNAL_API_KEY')).mode & 0o777).toBe(0o600)
    server = await npmStart(dataDir)
    expect(server.output()).toMatch(/^secrets {6}loaded .*ENCRYPTION_KEYS, INTERNAL_API_KEY, HMAC_SECRET/m)
    expect(server.output()).toContain(`internal key ${key} `)
  }, 120_000)
})
