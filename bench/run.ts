// `npm run bench`: (1) a platform read vs a bare Hono route, same process, same run, 50 connections;
// (2) minified + gzipped bundle size of every function. Prints figures; asserts nothing.
import { serve } from '@hono/node-server'
import autocannon from 'autocannon'
import { Hono } from 'hono'
import { Miniflare } from 'miniflare'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { webFamilies } from '../functions/web'
import { bundleFunction, functionEntries } from '../infra/bundle'
import { createNodeServices } from '../infra/services'
import { createPlatformApp } from '../lib/app'
import { generateApiKey, lookupPrefix } from '../lib/auth/api-keys'
import { hashSessionToken, newSessionToken, SESSION_COOKIE, SESSION_TTL_MS } from '../lib/auth/session'
import { sha256Hex } from '../lib/crypto'
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

async function rps(url: string, headers: Record<string, string> = {}) {
  const result = await autocannon({ url, connections, duration: seconds, headers })
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`)
  return result.requests.average
}

const dataDir = mkdtempSync(join(tmpdir(), 'bench-'))
const node = await createNodeServices({ env: { ...process.env, DATA_DIR: dataDir, APP_VERSION: 'v0.0.0-bench' } })
const platform = createPlatformApp(node.provider)
for (const family of Object.values(webFamilies)) platform.route('/', family)
const bare = new Hono().get('/', (c) => c.json({ ok: true }))

// A signed-in user with a few keys: the authenticated read looks up the session, then lists under RLS.
const [user] = await node.services.db.insert(users).values({ email: 'bench@example.com', name: 'Bench' }).returning()
const token = newSessionToken()
await node.services.db.insert(sessions).values({ tokenHash: await hashSessionToken(token), userId: user.id, expiresAt: new Date(Date.now() + SESSION_TTL_MS) })
for (let i = 0; i < 3; i++) {
  const key = generateApiKey()
  await node.services.db.insert(apiKeys).values({ userId: user.id, name: `key ${i}`, prefix: lookupPrefix(key), keyHash: 'bench', keySha256: await sha256Hex(key) })
}
const cookie = `${SESSION_COOKIE}=${token}`

const bareServer = await listen(bare.fetch)
const platformServer = await listen(platform.fetch)
const reads = [
  { name: 'GET /api/version', path: '/api/version', headers: {} as Record<string, string> },
  { name: 'GET /api/keys (session)', path: '/api/keys', headers: { cookie } },
]

console.log(`throughput: ${connections} connections, ${seconds}s each, db=${node.adapters.db} (set DATABASE_URL for real Postgres)`)
const bareRps = await rps(`${bareServer.url}/`)
console.log(`  bare Hono GET /              ${bareRps.toFixed(0).padStart(7)} req/s`)
for (const read of reads) {
  const r = await rps(`${platformServer.url}${read.path}`, read.headers)
  console.log(`  ${read.name.padEnd(28)} ${r.toFixed(0).padStart(7)} req/s   ratio ${(r / bareRps).toFixed(2)} (goal >= 0.5)`)
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
console.log(`  median ${(median / 1024).toFixed(1)} KB gz (goal <= 100), largest ${(sizes[sizes.length - 1] / 1024).toFixed(1)} KB gz (goal <= 250)`)

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
process.exit(0)
