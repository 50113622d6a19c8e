import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { createWebApp } from '../../functions/web'
import { APP_LOGIN_ROLE, migratePostgres } from '../../infra/database'
import { createNodeServices, type NodeServices } from '../../infra/services'
import { hashSessionToken, newSessionToken, SESSION_COOKIE, SESSION_TTL_MS } from '../../lib/auth/session'
import { withUser } from '../../lib/db/rls'
import { unavailableDependency } from '../../lib/http/dependency'
import { cfClientIp } from '../../lib/http/client-ip'
import { sessions, users } from '../../schema'
import { startFaultProxy, underFault, type FaultProxy } from '../support/fault-proxy'
import { BROWSER } from '../support/harness'
import { freshIp } from '../support/requests'
import { ensureTestRole } from '../support/stores'

// The local server's database path (`DATABASE_URL` without Neon: node-postgres, infra/database.ts `openPostgres`, as
// `npm start` opens it through infra/services.ts) with Postgres behind the TCP fault proxy: refused and blackholed,
// 503 DATABASE_UNAVAILABLE with Retry-After within the connect and answer deadlines (DATABASE_CONNECT_TIMEOUT_MS,
// DATABASE_QUERY_TIMEOUT_MS, shortened here), and the same app serving again once Postgres is back.
const url = process.env.TEST_DATABASE_URL

const CONNECT_MS = 500
const QUERY_MS = 800
/** A request may wait out one connect and one answer deadline; the rest is room for a loaded machine. */
const WITHIN_MS = CONNECT_MS + QUERY_MS + 1500

if (!url) {
  console.warn('node-postgres fault tests skipped: TEST_DATABASE_URL not set')
  describe.skip('node-postgres under faults (skipped: TEST_DATABASE_URL not set)', () => {
    it('needs a real Postgres', () => {})
  })
} else {
  describe('node-postgres (the local server with DATABASE_URL) when Postgres goes away', () => {
    const name = `t_${crypto.randomUUID().replace(/-/g, '').slice(0, 16)}`
    const admin = new pg.Client({ connectionString: url })
    const dataDir = mkdtempSync(join(tmpdir(), 'pg-faults-'))
    let proxy: FaultProxy
    let node: NodeServices
    let web: ReturnType<typeof createWebApp>
    let cookie = ''
    let userId = ''
    let warned: string[] = []

    beforeAll(async () => {
      await admin.connect()
      await admin.query(`create database ${name}`)
      const owner = Object.assign(new URL(url), { pathname: `/${name}` })
      await migratePostgres(owner.toString())
      await ensureTestRole(admin)
      proxy = await startFaultProxy({ target: `${owner.hostname}:${owner.port || 5432}`, mode: 'tcp' })
      const app = Object.assign(new URL(owner), { username: APP_LOGIN_ROLE, hostname: proxy.host, port: String(proxy.port) })
      node = await createNodeServices({
        env: {
          DATABASE_URL: app.toString(),
          MIGRATION_DATABASE_URL: owner.toString(),
          DATABASE_CONNECT_TIMEOUT_MS: String(CONNECT_MS),
          DATABASE_QUERY_TIMEOUT_MS: String(QUERY_MS),
          APP_ORIGIN: 'http://localhost:3000',
          SESSION_SECRET: 'pg-faults-session-secret',
          DATA_DIR: dataDir,
          LOG_REQUESTS: '0',
        },
        clientIp: cfClientIp,
        durableQueue: false,
      })
      expect(node.adapters.db).toBe('postgres')
      web = createWebApp(node.provider)
      // A user with a session, written by the app itself through its purposes.
      const token = newSessionToken()
      const tokenHash = await hashSessionToken(token)
      const [user] = await node.services.reader.asService('signIn', (db) => db.insert(users).values({ email: `pg-${name}@example.com`, name: 'Pg', emailVerifiedAt: new Date() }).returning())
      await node.services.reader.asService('sessionLifecycle', (db) => db.insert(sessions).values({ tokenHash, userId: user.id, expiresAt: new Date(Date.now() + SESSION_TTL_MS) }))
      cookie = `${SESSION_COOKIE}=${token}`
      userId = user.id
    }, 60_000)
    afterAll(async () => {
      await proxy?.set('pass')
      await node?.close()
      await proxy?.close()
      await admin.query(`drop database if exists ${name} with (force)`)
      await admin.end()
      rmSync(dataDir, { recursive: true, force: true })
    })
    afterEach(() => vi.restoreAllMocks())

    const quiet = () => {
      warned = []
      for (const m of ['warn', 'error', 'info'] as const) vi.spyOn(console, m).mockImplementation((line: unknown) => void warned.push(String(line)))
    }
    const request = (method: string, path: string, body?: unknown) =>
      web.request(path, {
        method,
        headers: { ...BROWSER, cookie, 'content-type': 'application/json', 'cf-connecting-ip': freshIp() },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
    const readKeys = () => request('GET', '/api/keys')
    const createKey = (n: string) => request('POST', '/api/keys', { name: n })

    async function expectUnavailable(res: Response) {
      expect(res.status).toBe(503)
      expect(res.headers.get('retry-after')).toBe('5')
      expect(await res.json()).toEqual({ error: 'Database unavailable', code: 'DATABASE_UNAVAILABLE' })
      const lines = warned.flatMap((l) => {
        try {
          return [JSON.parse(l)]
        } catch {
          return [{ notJson: l }]
        }
      })
      expect(lines.filter((l) => 'notJson' in l)).toEqual([])
      const line = lines.find((l) => l.event === 'dependency.unavailable' && l.requestId === res.headers.get('x-request-id'))
      expect(line).toMatchObject({ dependency: 'database' })
      expect(JSON.stringify(line)).not.toMatch(/postgres:\/\/|127\.0\.0\.1|select |insert /i)
    }

    it('serves while Postgres answers (the lists read through selects prepared per connection)', async () => {
      expect((await createKey('before')).status).toBe(201)
      for (let i = 0; i < 3; i++) {
        const keys = await readKeys()
        expect(keys.status).toBe(200)
        expect(((await keys.json()) as { keys: Array<{ name: string }> }).keys.map((k) => k.name)).toEqual(['before'])
        const agents = await request('GET', '/api/agents')
        expect(agents.status).toBe(200)
        expect(await agents.json()).toEqual({ agents: [] })
      }
    })

    it.each([
      ['refusing connections (open ones reset)', 'refuse' as const],
      ['blackholed (accepts, never answers; open connections go silent)', 'blackhole' as const],
    ])('Postgres %s: a read and a write answer 503 DATABASE_UNAVAILABLE with Retry-After in time; once back, the same app serves them', async (_name, fault) => {
      quiet()
      const read = await underFault(proxy, fault, async () => {
        const r = await underTimer(readKeys)
        const w = await underTimer(() => createKey(`during-${fault}`))
        return { r, w }
      })
      await expectUnavailable(read.value.r.res)
      expect(read.value.r.ms).toBeLessThan(WITHIN_MS)
      await expectUnavailable(read.value.w.res)
      expect(read.value.w.ms).toBeLessThan(WITHIN_MS)

      // Back: no restart, the next requests are served (connections the fault broke were dropped, not reused).
      const write = await createKey(`after-${fault}`)
      expect(write.status).toBe(201)
      const res = await readKeys()
      expect(res.status).toBe(200)
      const names = ((await res.json()) as { keys: Array<{ name: string }> }).keys.map((k) => k.name)
      expect(names).toContain(`after-${fault}`)
      expect(names).not.toContain(`during-${fault}`)
    }, 30_000)

    it('transactions whose BEGIN gets no answer give their connections back: more of them than the pool holds, then Postgres is back and the next one is served', async () => {
      const attempts = 14 // the pool holds 10
      // Ten open connections in the pool first, so the failing transactions check them out and send BEGIN on them.
      await Promise.all(Array.from({ length: 10 }, () => withUser(node.services.db, userId, (tx) => tx.execute(sql`select pg_sleep(0.05)`))))
      quiet()
      const failed = await underFault(proxy, 'blackhole', () =>
        Promise.allSettled(Array.from({ length: attempts }, () => withUser(node.services.db, userId, (tx) => tx.select().from(users)))),
      )
      expect(failed.value.every((r) => r.status === 'rejected' && unavailableDependency(r.reason) === 'database')).toBe(true)
      expect(failed.ms).toBeLessThan(2 * (CONNECT_MS + QUERY_MS) + 1500)
      // Back: a connection is free (none left checked out by the failed BEGINs) and the transaction is served.
      const rows = await withUser(node.services.db, userId, (tx) => tx.select({ id: users.id }).from(users))
      expect(rows).toEqual([{ id: userId }])
    }, 30_000)
  })
}

async function underTimer(send: () => Response | Promise<Response>) {
  const started = performance.now()
  const res = await send()
  return { res, ms: performance.now() - started }
}
