// Reads through the local server against limits measured in the same run: a bare Hono route (same process, same
// load generator), and on a real Postgres (DATABASE_URL or BENCH_DATABASE_URL) pgbench running `GET /api/keys`'s
// exact transaction as the app's login role. Prints figures and ratios; asserts nothing.
import { serve } from '@hono/node-server'
import autocannon from 'autocannon'
import { desc, eq } from 'drizzle-orm'
import { drizzle } from 'drizzle-orm/node-postgres'
import { Hono } from 'hono'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import { createWebApp } from '../functions/web'
import { createNodeServices } from '../infra/services'
import { generateApiKey, lookupPrefix } from '../lib/auth/api-keys'
import { hashSessionToken, newSessionToken, SESSION_COOKIE, SESSION_TTL_MS } from '../lib/auth/session'
import { sha256Hex } from '../lib/crypto'
import { APP_ROLE, asService, withUser } from '../lib/db/rls'
import { apiKeys, sessions, users } from '../schema'

export const benchSeconds = Number(process.env.BENCH_SECONDS ?? 4)
const connections = 50
/** pgbench's clients: as many connections as the server's pool holds (infra/database.ts). */
const PGBENCH_CLIENTS = 10
const PGBENCH_ROUNDS = 3

export function listen(fetch: (req: Request) => Response | Promise<Response>) {
  return new Promise<{ url: string; close: () => void }>((resolve) => {
    const server = serve({ fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) =>
      resolve({ url: `http://127.0.0.1:${info.port}`, close: () => server.close() }),
    )
  })
}

/**
 * autocannon against `url` for `benchSeconds`, in this thread (as the figures before it were taken: a worker thread
 * for the load would take a third share of two cores from the server and Postgres); throws on any non-2xx answer.
 */
export async function load(url: string, opts: { headers?: Record<string, string>; method?: string; body?: string; connections?: number } = {}) {
  const request = opts.method ? { method: opts.method as 'POST', body: opts.body } : {}
  const result = await autocannon({ url, connections: opts.connections ?? connections, duration: benchSeconds, headers: opts.headers, ...request })
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`)
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 }
}

const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL

/** pgbench running `script` as `url`'s role (the app's login role): transactions per second. */
async function pgbench(url: string, script: string): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-pgbench-'))
  try {
    const file = join(dir, 'keys.sql')
    writeFileSync(file, script)
    const u = new URL(url)
    const args = ['-n', '-f', file, '-c', String(PGBENCH_CLIENTS), '-j', '2', '-T', String(benchSeconds), '-h', u.hostname, '-p', u.port || '5432', '-U', decodeURIComponent(u.username), u.pathname.slice(1)]
    const env = { ...process.env, ...(u.password ? { PGPASSWORD: decodeURIComponent(u.password) } : {}) }
    const { stdout } = await promisify(execFile)(process.env.PGBENCH ?? 'pgbench', args, { env })
    const tps = /tps = ([\d.]+)/.exec(stdout)
    if (!tps) throw new Error(`pgbench printed no tps:\n${stdout}`)
    return Number(tps[1])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * `GET /api/keys`'s transaction as the route sends it (infra/database.ts `pgReader`): BEGIN READ ONLY, the
 * row-isolation settings, the keys-list select (drizzle's own SQL, its parameters inlined), COMMIT.
 */
function keysListTransaction(userId: string) {
  const select = drizzle({ client: {} as pg.Pool })
    .select()
    .from(apiKeys)
    .where(eq(apiKeys.userId, userId))
    .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id))
    .toSQL()
  const text = select.sql.replace(/\$(\d+)/g, (_, n: string) => `'${String(select.params[Number(n) - 1])}'`)
  return ['begin read only;', `select set_config('app.user_id', '${userId}', true), set_config('role', '${APP_ROLE}', true);`, `${text};`, 'commit;', ''].join('\n')
}

/** Bare Hono, then the platform's reads, each with its ratio to bare Hono; on real Postgres also the keys list against pgbench. */
export async function signedInReads() {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-'))
  // Request log lines off unless asked (LOG_REQUESTS=1): one per request would flood this output.
  const env = { LOG_REQUESTS: '0', ...process.env, DATA_DIR: dataDir, APP_VERSION: 'v0.0.0-bench', ...(DATABASE_URL ? { DATABASE_URL } : {}) }
  const node = await createNodeServices({ env })
  const platform = createWebApp(node.provider)
  const bare = new Hono().get('/', (c) => c.json({ ok: true }))

  // A signed-in user with a few keys, seeded the way the app writes them (the app's login owns nothing: the
  // user and session as the sign-in does, the keys as the user).
  const { db } = node.services
  const [user] = await asService(db, 'signIn', (tx) => tx.insert(users).values({ email: `bench-${Date.now()}@example.com`, name: 'Bench' }).returning())
  const token = newSessionToken()
  await asService(db, 'sessionLifecycle', async (tx) => tx.insert(sessions).values({ tokenHash: await hashSessionToken(token), userId: user.id, expiresAt: new Date(Date.now() + SESSION_TTL_MS) }))
  for (let i = 0; i < 3; i++) {
    const key = generateApiKey()
    await withUser(db, user.id, async (tx) => tx.insert(apiKeys).values({ userId: user.id, name: `key ${i}`, prefix: lookupPrefix(key), keyHash: 'bench', keySha256: await sha256Hex(key) }))
  }
  const cookie = `${SESSION_COOKIE}=${token}`

  const bareServer = await listen(bare.fetch)
  const platformServer = await listen(platform.fetch)
  console.log(`reads: ${connections} connections, ${benchSeconds}s each, db=${node.adapters.db} kv=${node.adapters.kv} (set BENCH_DATABASE_URL or DATABASE_URL for real Postgres)`)
  const bareLoad = await load(`${bareServer.url}/`)
  console.log(`  bare Hono GET /              ${bareLoad.rps.toFixed(0).padStart(7)} req/s   p99 ${bareLoad.p99} ms`)
  const reads = [
    { name: 'GET /api/version', path: '/api/version', headers: {} as Record<string, string> },
    { name: 'GET /api/auth/session', path: '/api/auth/session', headers: { cookie } },
    { name: 'GET /api/keys (session)', path: '/api/keys', headers: { cookie } },
  ]
  for (const read of reads) {
    const r = await load(`${platformServer.url}${read.path}`, { headers: read.headers })
    console.log(`  ${read.name.padEnd(28)} ${r.rps.toFixed(0).padStart(7)} req/s   ${(r.rps / bareLoad.rps).toFixed(3)} of bare Hono   p99 ${r.p99} ms`)
  }
  if (DATABASE_URL) {
    // The route and pgbench in turns, three times: the machine's load moves within a run; the median ratio is printed.
    const script = keysListTransaction(user.id)
    const ratios: number[] = []
    for (let round = 0; round < PGBENCH_ROUNDS; round++) {
      const route = await load(`${platformServer.url}/api/keys`, { headers: { cookie } })
      const tps = await pgbench(DATABASE_URL, script)
      ratios.push(route.rps / tps)
      console.log(`  GET /api/keys ${route.rps.toFixed(0).padStart(6)} req/s   pgbench (its transaction as ${new URL(DATABASE_URL).username}, ${PGBENCH_CLIENTS} clients) ${tps.toFixed(0).padStart(6)} tx/s   ratio ${(route.rps / tps).toFixed(2)}`)
    }
    ratios.sort((a, b) => a - b)
    console.log(`  GET /api/keys / pgbench: median ${ratios[Math.floor(ratios.length / 2)].toFixed(2)} of ${ratios.length}`)
  }
  bareServer.close()
  platformServer.close()
  await node.close()
  rmSync(dataDir, { recursive: true, force: true })

}
