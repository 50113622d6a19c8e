import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { mailedToken } from '../support/local-mail'
import { closedPort } from '../support/loopback'
import { waitFor } from '../support/wait'

/**
 * Finding 12: a restart of `npm start` with no secret configured used to seal agents' gateway tokens under a key
 * random per process, so after a restart the token route, debug, every lifecycle action and delete answered 500,
 * and agents still read `running` with no process behind them. Here the real server runs as a child process
 * (`node --import tsx infra/server.ts`, what `npm start` execs) twice on one DATA_DIR, with no secret in its
 * environment: the secrets are generated once (0600) and read back, and the agent comes through the restart.
 */
const root = new URL('../..', import.meta.url).pathname
const dataDir = mkdtempSync(join(tmpdir(), 'restart-'))
const ORIGIN = 'http://localhost:3000'
const BROWSER = { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/140.0', origin: ORIGIN }
const SECRETS = ['SESSION_SECRET', 'FARCASTER_SESSION_SECRET', 'QSTASH_CURRENT_SIGNING_KEY', 'ENCRYPTION_KEYS', 'INTERNAL_API_KEY', 'HMAC_SECRET']


interface Running {
  base: string
  output: () => string
  stop(): Promise<number | null>
}

const children = new Set<ChildProcess>()
afterAll(() => {
  for (const c of children) c.kill('SIGKILL')
  rmSync(dataDir, { recursive: true, force: true })
})

async function start(web: number, backend: number): Promise<Running> {
  // Only what a newcomer has: no SESSION_SECRET, ENCRYPTION_KEYS, QStash or Farcaster secret.
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(web), BACKEND_PORT: String(backend), DATA_DIR: dataDir, PASSWORD_HASH_COST: '4', LOG_REQUESTS: '0' }
  const child = spawn(process.execPath, ['--import', 'tsx', 'infra/server.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  children.add(child)
  let output = ''
  child.stdout!.on('data', (d) => (output += d))
  child.stderr!.on('data', (d) => (output += d))
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => (children.delete(child), r(code))))
  const base = `http://127.0.0.1:${web}`
  await waitFor(async () => (await fetch(`${base}/api/health`).catch(() => null))?.ok === true, { ms: 90_000, every: 200, what: `server up\n${output}` })
  return {
    base,
    output: () => output,
    async stop() {
      child.kill('SIGTERM')
      return exited
    },
  }
}

const secretFiles = () => Object.fromEntries(SECRETS.map((n) => [n, readFileSync(join(dataDir, 'secrets', n), 'utf8')]))

describe('npm start with no secret configured: a restart loses nothing', () => {
  it('secrets are generated once (0600) and reused; the agent reads stopped, its token, lifecycle, debug and delete work', async () => {
    const [web, backend] = [await closedPort(), await closedPort()]
    let cookie = ''
    let server = await start(web, backend)
    const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
      fetch(`${server.base}${path}`, {
        method,
        headers: { ...BROWSER, cookie, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
        body: body ? JSON.stringify(body) : undefined,
      })
    const json = async (res: Response) => (await res.json()) as Record<string, any>

    let agent: Record<string, any>
    let token: string
    let csrfHeader: string
    try {
      // Said at start: which were generated, never a value.
      expect(server.output()).toMatch(/secrets\s+generated SESSION_SECRET, FARCASTER_SESSION_SECRET, QSTASH_CURRENT_SIGNING_KEY, ENCRYPTION_KEYS, INTERNAL_API_KEY, HMAC_SECRET \(kept in .*secrets, 0600/)
      const email = `restart-${crypto.randomUUID().slice(0, 8)}@example.com`
      expect((await api('POST', '/api/register', { email, password: 'correct horse battery staple', name: 'Restart' })).status).toBe(201)
      csrfHeader = (await json(await api('GET', '/api/auth/csrf'))).header
      const login = await api('POST', '/api/auth/login', { email, password: 'correct horse battery staple' }, { 'x-csrf-token': csrfHeader })
      expect(login.status).toBe(200)
      cookie = login.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ')
      // The trial is paid access once the mailbox is proven: the link the local outbox printed.
      expect((await api('POST', '/api/auth/verify-email', { token: mailedToken(server.output(), email) })).status).toBe(200)

      // A trial user at their plan's limit (solo: one agent).
      const provisioned = await api('POST', '/api/provision', { name: 'survivor' })
      expect(provisioned.status).toBe(201)
      agent = (await json(provisioned)).agent
      await waitFor(async () => (await json(await api('GET', `/api/agents/${agent.id}/stats`))).status === 'running', { ms: 20_000, every: 200, what: 'agent running' })
      const t = await api('GET', `/api/agents/${agent.id}/token`)
      expect(t.status).toBe(200)
      token = (await json(t)).token
      expect(token).toMatch(/^[0-9a-f]{64}$/)
    } finally {
      expect(await server.stop()).toBe(0)
    }

    // The secrets are on disk, owner-only, and no value was printed.
    const dir = statSync(join(dataDir, 'secrets'))
    expect(dir.mode & 0o777).toBe(0o700)
    for (const name of SECRETS) expect(statSync(join(dataDir, 'secrets', name)).mode & 0o777).toBe(0o600)
    expect(readdirSync(join(dataDir, 'secrets')).sort()).toEqual([...SECRETS].sort()) // no temporary file left
    const before = secretFiles()
    for (const [name, value] of Object.entries(before)) {
      expect(value.length).toBeGreaterThanOrEqual(43)
      if (name === 'INTERNAL_API_KEY') expect(server.output()).toContain(`internal key ${value} `) // printed on purpose
      else expect(server.output()).not.toContain(value)
    }
    // The runtime process ended with its server.
    await waitFor(async () => (await fetch(`${agent!.url}/healthz`).then(() => false).catch(() => true)), { ms: 10_000, every: 200, what: 'runtime gone' })

    server = await start(web, backend)
    try {
      expect(server.output()).toMatch(/secrets\s+loaded SESSION_SECRET, FARCASTER_SESSION_SECRET, QSTASH_CURRENT_SIGNING_KEY/)
      expect(server.output()).toMatch(/agents\s+1 recorded stopped/)
      expect(secretFiles()).toEqual(before) // the same values, not replaced
      // Never a value, except the internal key this server keeps, which the start prints on purpose (you call the hook with it).
      for (const [name, value] of Object.entries(before)) {
        if (name === 'INTERNAL_API_KEY') expect(server.output()).toContain(`internal key ${value} `)
        else expect(server.output()).not.toContain(value)
      }

      // The same SESSION_SECRET: a CSRF token from before the restart still verifies.
      const again = await api('POST', '/api/auth/login', { email: 'nobody@example.com', password: 'wrong password here' }, { 'x-csrf-token': csrfHeader! })
      expect(again.status).toBe(401)

      // Its runtime is gone: the agent says so, in the list and in its details, with the reason.
      const listed = (await json(await api('GET', '/api/agents'))).agents as Array<Record<string, any>>
      expect(listed.find((a) => a.id === agent.id)?.status).toBe('stopped')
      const details = await json(await api('GET', `/api/agents/${agent.id}`))
      expect(details).toMatchObject({ status: 'stopped' })
      expect(details.statusReason).toMatch(/server restarted/)

      // The token opens (the same one); the lifecycle works; the runtime takes it.
      const t = await api('GET', `/api/agents/${agent.id}/token`)
      expect(t.status).toBe(200)
      expect((await json(t)).token).toBe(token!)
      expect((await api('POST', `/api/agents/${agent.id}/start`)).status).toBe(200)
      await waitFor(async () => (await json(await api('GET', `/api/agents/${agent.id}/stats`))).status === 'running', { ms: 20_000, every: 200, what: 'agent running again' })
      const debug = await api('POST', '/api/debug', { command: 'runtime.version', agentId: agent.id })
      expect(debug.status).toBe(200)
      expect((await api('POST', `/api/agents/${agent.id}/restart`)).status).toBe(200)

      // Delete works, and the trial user may provision again.
      expect((await api('DELETE', `/api/agents/${agent.id}`)).status).toBe(200)
      expect((await api('GET', `/api/agents/${agent.id}`)).status).toBe(404)
      const next = await api('POST', '/api/provision', { name: 'next' })
      expect(next.status).toBe(201)
      expect((await api('DELETE', `/api/agents/${(await json(next)).agent.id}`)).status).toBe(200)
    } finally {
      expect(await server.stop()).toBe(0)
    }
  }, 240_000)
})
