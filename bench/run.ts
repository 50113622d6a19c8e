// `npm run bench`: (1) a platform read vs a bare Hono route, same process, same run, 50 connections;
// (2) minified + gzipped bundle size of every function. Prints figures; asserts nothing.
import { serve } from '@hono/node-server'
import autocannon from 'autocannon'
import { Hono } from 'hono'
import { Miniflare } from 'miniflare'
import { mkdtempSync, rmSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { createWebApp } from '../functions/web'
import { bundleFunction, functionEntries } from '../infra/bundle'
import { classifyBench } from './classify'
import { coldStarts } from './cold-start'
import { importCosts } from './import-cost'
import { watchdogSweeps } from './watchdog'
import { createNodeServices } from '../infra/services'
import { generateApiKey, lookupPrefix } from '../lib/auth/api-keys'
import { hashSessionToken, newSessionToken, SESSION_COOKIE, SESSION_TTL_MS } from '../lib/auth/session'
import { sha256Hex } from '../lib/crypto'
import { asService, withUser } from '../lib/db/rls'
import { apiKeys, sessions, users } from '../schema'

const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const connections = 50

function listen(fetch: (req: Request) => Response | Promise<Response>) {
  return new Promise<{ url: string; close: () => void }>((resolve) => {
    const server = serve({ fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) =>
      resolve({ url: `http://127.0.0.1:${info.port}`, close: () => server.close() }),
    )
  })
}

async function load(url: string, headers: Record<string, string> = {}) {
  const result = await autocannon({ url, connections, duration: seconds, headers })
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`)
  return { rps: result.requests.average, p99: result.latency.p99 }
}

const dataDir = mkdtempSync(join(tmpdir(), 'bench-'))
// Request log lines off unless asked (LOG_REQUESTS=1): one per request would flood this output.
const env = { LOG_REQUESTS: '0', ...process.env, DATA_DIR: dataDir, APP_VERSION: 'v0.0.0-bench' }
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
// Goals from the hot-path issue: the ratio to a bare Hono route measured in the same run, and the p99.
const reads = [
  { name: 'GET /api/version', path: '/api/version', headers: {} as Record<string, string>, goal: 0.5 },
  { name: 'GET /api/auth/session', path: '/api/auth/session', headers: { cookie }, goal: 0.5 },
  { name: 'GET /api/keys (session)', path: '/api/keys', headers: { cookie }, goal: node.adapters.db === 'pglite' ? 0.1 : 0.25, p99Goal: 50 },
]

console.log(`machine: ${availableParallelism()} cores, ${process.version}`)
console.log(`throughput: ${connections} connections, ${seconds}s each, db=${node.adapters.db} kv=${node.adapters.kv} (set DATABASE_URL for real Postgres)`)
const bareLoad = await load(`${bareServer.url}/`)
console.log(`  bare Hono GET /              ${bareLoad.rps.toFixed(0).padStart(7)} req/s   p99 ${bareLoad.p99} ms`)
for (const read of reads) {
  const r = await load(`${platformServer.url}${read.path}`, read.headers)
  const p99 = `p99 ${r.p99} ms${read.p99Goal ? ` (goal <= ${read.p99Goal})` : ''}`
  console.log(`  ${read.name.padEnd(28)} ${r.rps.toFixed(0).padStart(7)} req/s   ratio ${(r.rps / bareLoad.rps).toFixed(3)} (goal >= ${read.goal})   ${p99}`)
}
bareServer.close()
platformServer.close()
await node.close()
rmSync(dataDir, { recursive: true, force: true })

console.log('bundle size (minified, gzipped):')
const sizes: number[] = []
for (const { family, entry } of functionEntries()) {
  const { gzipBytes, bytes } = await bundleFunction(entry, { minify: true })
  sizes.push(gzipBytes)
  console.log(`  ${family.padEnd(12)} ${(gzipBytes / 1024).toFixed(1).padStart(7)} KB gz  (${(bytes / 1024).toFixed(0)} KB raw)`)
}
sizes.sort((a, b) => a - b)
const median = sizes[Math.floor((sizes.length - 1) / 2)]
console.log(`  median ${(median / 1024).toFixed(1)} KB gz, largest ${(sizes[sizes.length - 1] / 1024).toFixed(1)} KB gz (goal <= 250)`)

// (3) The password hash's CPU cost where it runs in production: hash + verify per request in workerd.
console.log('password hashing in workerd (bcrypt hash + verify, median of 5):')
const { code } = await bundleFunction(new URL('./password-worker.ts', import.meta.url).pathname)
const mf = new Miniflare({ modules: [{ type: 'ESModule', path: 'index.mjs', contents: code }], compatibilityDate: '2026-04-01' })
for (const cost of [4, 10, 12]) {
  const times: number[] = []
  for (let i = 0; i < 5; i++) {
    const t = performance.now()
    await (await mf.dispatchFetch(`http://bench/?cost=${cost}`)).text()
    times.push(performance.now() - t)
  }
  times.sort((a, b) => a - b)
  console.log(`  cost ${String(cost).padStart(2)}: ${(times[2] / 2).toFixed(0).padStart(4)} ms per hash or check`)
}
await mf.dispose()

// (4) Cold start of every function in workerd, and (5) what each heavy import costs.
await coldStarts()
await importCosts()

// (6) The watchdog sweeping 1k and 10k agents on loopback fake runtimes (100k: npm run bench:watchdog).
await watchdogSweeps([1000, 10_000])

// (7) The tool-call classifier: latency per call on its corpus, and its bundle cost.
await classifyBench()
process.exit(0)
