import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createNodeServices, type NodeServices } from '../../infra/services'
import { createPlatformApp, createRouter } from '../../lib/app'
import { clientIpBehindProxies, normalizeIp, trustedProxyMatcher } from '../../lib/http/client-ip'
import { limits } from '../../lib/http/limits'
import { rateLimit } from '../../lib/http/rate-limit'
import { MemoryKv } from '../../lib/kv/memory'
import { useHarness } from '../support/harness'
import { type Loopback, serveFetch } from '../support/loopback'

let app: ReturnType<typeof createPlatformApp>
let handled = 0

const rule = { name: 't', limit: 3, windowSec: 60, message: 'Slow down' }

const h = useHarness()
beforeAll(async () => {
  const router = createRouter()
  router.use('/t/*', rateLimit(rule))
  router.get('/t/hit', (c) => {
    handled++
    return c.json({ ok: true })
  })
  router.get('/other/hit', rateLimit({ ...rule, name: 't-other' }), (c) => c.json({ ok: true }))
  router.get('/by-user/hit', rateLimit({ ...rule, name: 't-user' }, (c) => `user:${c.req.header('x-user') ?? 'anon'}`), (c) =>
    c.json({ ok: true }),
  )
  app = createPlatformApp(() => h.services).route('/', router)
})

/** Fixed windows are aligned to the epoch: start a counting test only with `needMs` left in the window. */
async function freshWindow(windowSec: number, needMs: number) {
  const windowMs = windowSec * 1000
  const left = windowMs - (Date.now() % windowMs)
  if (left < needMs) await new Promise((r) => setTimeout(r, left + 50))
}

let ipCounter = 0
/** A client address no other test uses (counters live for the whole window). */
const freshIp = () => `203.0.113.${++ipCounter}`

const rateLimitHeaders = (res: Response) => ({
  limit: res.headers.get('ratelimit-limit'),
  remaining: res.headers.get('ratelimit-remaining'),
  reset: Number(res.headers.get('ratelimit-reset')),
})

const noLegacyHeaders = (res: Response) => {
  const names = [...res.headers.keys()].map((k) => k.toLowerCase())
  expect(names.filter((n) => n.startsWith('x-ratelimit'))).toEqual([])
}

describe('limits: the rateLimit middleware', () => {
  it('the first 3 pass with RateLimit-* headers counting down; the 4th is 429 {error} with Retry-After', async () => {
    await freshWindow(60, 5000)
    const ip = freshIp()
    const before = handled
    for (const expected of ['2', '1', '0']) {
      const res = await app.request('/t/hit', { headers: { 'cf-connecting-ip': ip } })
      expect(res.status).toBe(200)
      const rl = rateLimitHeaders(res)
      expect(rl.limit).toBe('3')
      expect(rl.remaining).toBe(expected)
      expect(rl.reset).toBeGreaterThanOrEqual(1)
      expect(rl.reset).toBeLessThanOrEqual(60)
      expect(res.headers.get('retry-after')).toBeNull()
      noLegacyHeaders(res)
    }
    const refused = await app.request('/t/hit', { headers: { 'cf-connecting-ip': ip } })
    expect(refused.status).toBe(429)
    expect(await refused.json()).toEqual({ error: 'Slow down', code: 'RATE_LIMITED' })
    const rl = rateLimitHeaders(refused)
    expect(rl.limit).toBe('3')
    expect(rl.remaining).toBe('0')
    expect(rl.reset).toBeGreaterThanOrEqual(1)
    expect(rl.reset).toBeLessThanOrEqual(60)
    const retryAfter = Number(refused.headers.get('retry-after'))
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)
    expect(retryAfter).toBe(Math.max(1, rl.reset))
    noLegacyHeaders(refused)
    expect(handled).toBe(before + 3) // the refused request never reached the handler
  })

  it('the 429 is readable cross-origin: CORS allows the dashboard and exposes the limit headers', async () => {
    await freshWindow(60, 5000)
    const ip = freshIp()
    const headers = { 'cf-connecting-ip': ip, origin: 'http://localhost:3000' }
    for (let i = 0; i < 3; i++) await app.request('/t/hit', { headers })
    const refused = await app.request('/t/hit', { headers })
    expect(refused.status).toBe(429)
    expect(refused.headers.get('access-control-allow-origin')).toBe('http://localhost:3000')
    const exposed = (refused.headers.get('access-control-expose-headers') ?? '').toLowerCase().split(/\s*,\s*/)
    for (const h of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after']) expect(exposed).toContain(h)
  })

  it('different CF-Connecting-IP values have separate counters', async () => {
    await freshWindow(60, 5000)
    const [a, b] = [freshIp(), freshIp()]
    for (let i = 0; i < 3; i++) expect((await app.request('/t/hit', { headers: { 'cf-connecting-ip': a } })).status).toBe(200)
    expect((await app.request('/t/hit', { headers: { 'cf-connecting-ip': a } })).status).toBe(429)
    const other = await app.request('/t/hit', { headers: { 'cf-connecting-ip': b } })
    expect(other.status).toBe(200)
    expect(other.headers.get('ratelimit-remaining')).toBe('2')
  })

  it('differently named rules never share counters', async () => {
    await freshWindow(60, 5000)
    const ip = freshIp()
    for (let i = 0; i < 4; i++) await app.request('/t/hit', { headers: { 'cf-connecting-ip': ip } })
    const other = await app.request('/other/hit', { headers: { 'cf-connecting-ip': ip } })
    expect(other.status).toBe(200)
    expect(other.headers.get('ratelimit-remaining')).toBe('2')
  })

  it('a custom identity counts per identity, whatever the address', async () => {
    await freshWindow(60, 5000)
    const user = `u-${crypto.randomUUID()}`
    for (let i = 0; i < 3; i++) {
      const res = await app.request('/by-user/hit', { headers: { 'x-user': user, 'cf-connecting-ip': freshIp() } })
      expect(res.status).toBe(200)
    }
    const refused = await app.request('/by-user/hit', { headers: { 'x-user': user, 'cf-connecting-ip': freshIp() } })
    expect(refused.status).toBe(429)
  })
})

describe('limits: the backend /api routes\' limiter (120 per minute per IP)', () => {
  // Without a key validate-key is refused after the limiter and before any query: the limiter alone is measured.
  const validateKey = (ip: string) => h.backend.request('/api/validate-key', { method: 'POST', headers: { 'cf-connecting-ip': ip } })

  it('120 requests from one IP pass the limiter, the 121st is 429 "Too many requests, please slow down."', async () => {
    await freshWindow(60, 15_000)
    const ip = freshIp()
    for (let i = 1; i <= 120; i++) {
      const res = await validateKey(ip)
      expect(res.status, `request ${i}`).toBe(401)
      expect(res.headers.get('ratelimit-limit')).toBe('120')
      expect(res.headers.get('ratelimit-remaining')).toBe(String(120 - i))
    }
    const refused = await validateKey(ip)
    expect(refused.status).toBe(429)
    expect(await refused.json()).toEqual({ error: 'Too many requests, please slow down.', code: 'RATE_LIMITED' })
    expect(refused.headers.get('ratelimit-limit')).toBe('120')
    expect(refused.headers.get('ratelimit-remaining')).toBe('0')
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    noLegacyHeaders(refused)
    // Another client is unaffected.
    expect((await validateKey(freshIp())).status).toBe(401)
  })

  it('the limit matches the spec table', () => {
    expect(limits.backend).toEqual({ name: 'backend', limit: 120, windowSec: 60, message: 'Too many requests, please slow down.' })
  })

  it('every backend /api route is behind it, and documents it: 429 with Retry-After, RateLimit-* on its 2xx', async () => {
    const doc = (await (await h.backend.request('/openapi.json')).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown> }> }>>
    }
    const api = Object.entries(doc.paths).filter(([path]) => path.startsWith('/api/'))
    expect(api.length).toBeGreaterThan(0)
    for (const [path, ops] of api) {
      for (const method of Object.keys(ops)) {
        // Whatever the answer (no credentials, no body), it has passed the limiter first.
        const res = await h.backend.request(path, { method: method.toUpperCase(), headers: { 'cf-connecting-ip': freshIp() } })
        // `/api/ai/*` and `/api/deployments` also pass their own spec limits (30/min, 5/min), whose headers they answer with.
        const own = path.startsWith('/api/ai/') ? '30' : path === '/api/deployments' ? '5' : '120'
        expect(res.headers.get('ratelimit-limit'), `${method} ${path}`).toBe(own)
      }
    }
    for (const op of api.flatMap(([, ops]) => Object.values(ops))) {
      expect(Object.keys(op.responses[429]?.headers ?? {})).toEqual(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After'])
      for (const [status, res] of Object.entries(op.responses)) if (status.startsWith('2')) expect(res.headers).toHaveProperty('RateLimit-Limit')
    }
  })

  it('an unknown /api path is a plain 404: no route, so no limiter (there is nothing behind it to protect)', async () => {
    const res = await h.backend.request('/api/nothing-here', { headers: { 'cf-connecting-ip': freshIp() } })
    expect(res.status).toBe(404)
    expect(await res.json()).toEqual({ error: 'Not found', code: 'NOT_FOUND' })
    expect(res.headers.get('ratelimit-limit')).toBeNull()
  })

  it('backend GET /health is not behind the limiter: no RateLimit-* headers, never 429', async () => {
    const ip = freshIp()
    for (let i = 0; i < 3; i++) {
      const res = await h.backend.request('/health', { headers: { 'cf-connecting-ip': ip } })
      expect(res.status).toBe(200)
      const names = [...res.headers.keys()].map((k) => k.toLowerCase())
      expect(names.filter((n) => n.includes('ratelimit') || n === 'retry-after')).toEqual([])
    }
  })
})

describe('limits: client address behind proxies', () => {
  it('without TRUST_PROXY, X-Forwarded-For is ignored and the peer is the client', () => {
    const trusted = trustedProxyMatcher(undefined)
    expect(trusted('127.0.0.1')).toBe(false)
    expect(clientIpBehindProxies('127.0.0.1', '1.1.1.1, 2.2.2.2', trusted)).toBe('127.0.0.1')
    expect(clientIpBehindProxies('198.51.100.7', undefined, trusted)).toBe('198.51.100.7')
    expect(trustedProxyMatcher('')('127.0.0.1')).toBe(false)
  })

  it('TRUST_PROXY=loopback behind a local proxy: the rightmost untrusted hop', () => {
    const trusted = trustedProxyMatcher('loopback')
    expect(clientIpBehindProxies('127.0.0.1', '1.1.1.1, 2.2.2.2', trusted)).toBe('2.2.2.2')
    expect(clientIpBehindProxies('::1', '2.2.2.2', trusted)).toBe('2.2.2.2')
    expect(clientIpBehindProxies('::ffff:127.0.0.1', '2.2.2.2', trusted)).toBe('2.2.2.2')
    // Loopback hops added by chained local proxies are skipped too.
    expect(clientIpBehindProxies('127.0.0.1', '2.2.2.2, 127.0.0.5', trusted)).toBe('2.2.2.2')
    // No header: the peer itself.
    expect(clientIpBehindProxies('127.0.0.1', undefined, trusted)).toBe('127.0.0.1')
  })

  it('a client-forged leftmost entry is never chosen', () => {
    const trusted = trustedProxyMatcher('loopback')
    // The client sent `X-Forwarded-For: 9.9.9.9`; the proxy appended the real address 2.2.2.2.
    expect(clientIpBehindProxies('127.0.0.1', '9.9.9.9, 2.2.2.2', trusted)).toBe('2.2.2.2')
    // Forging a trusted-looking address does not help either: 2.2.2.2 is still the first untrusted hop.
    expect(clientIpBehindProxies('127.0.0.1', '127.0.0.1, 9.9.9.9, 2.2.2.2', trusted)).toBe('2.2.2.2')
  })

  it('an untrusted peer is the client even when it sends X-Forwarded-For', () => {
    const trusted = trustedProxyMatcher('loopback')
    expect(clientIpBehindProxies('198.51.100.7', '1.1.1.1, 2.2.2.2', trusted)).toBe('198.51.100.7')
  })

  it('a list of proxy addresses; true/1 mean loopback; ::ffff: prefixes are ignored', () => {
    const trusted = trustedProxyMatcher('10.0.0.1, 10.0.0.2')
    expect(trusted('10.0.0.1')).toBe(true)
    expect(trusted('::ffff:10.0.0.2')).toBe(true)
    expect(trusted('127.0.0.1')).toBe(false)
    expect(clientIpBehindProxies('10.0.0.1', '9.9.9.9, 8.8.8.8, 10.0.0.2', trusted)).toBe('8.8.8.8')
    expect(trustedProxyMatcher('true')('127.0.0.1')).toBe(true)
    expect(trustedProxyMatcher('1')('::1')).toBe(true)
    expect(normalizeIp('::ffff:1.2.3.4')).toBe('1.2.3.4')
  })

  it('empty X-Forwarded-For entries are skipped', () => {
    const trusted = trustedProxyMatcher('loopback')
    expect(clientIpBehindProxies('127.0.0.1', ' , 2.2.2.2 ,, ', trusted)).toBe('2.2.2.2')
    expect(clientIpBehindProxies('127.0.0.1', ' , ', trusted)).toBe('127.0.0.1')
  })
})

describe('limits: client address on a real Node socket (createNodeServices)', () => {
  const servers: Array<{ server: Loopback; node: NodeServices }> = []
  afterAll(async () => {
    for (const { server, node } of servers) {
      await server.close()
      await node.close()
    }
  })

  /** The platform stack on a loopback socket with the Node client-ip resolver for `trustProxy`. */
  async function start(trustProxy?: string) {
    const node = await createNodeServices({
      env: { APP_ORIGIN: 'http://localhost:3000', DATA_DIR: '.test-data', ...(trustProxy ? { TRUST_PROXY: trustProxy } : {}) },
      database: { db: h.services.db, adapter: 'pglite', close: async () => {} },
      kv: new MemoryKv(),
    })
    const router = createRouter()
    router.get('/ip', rateLimit({ name: 'ip', limit: 2, windowSec: 60, message: 'Slow down' }), (c) =>
      c.json({ ip: c.var.services.clientIp(c) }),
    )
    const server = await serveFetch(createPlatformApp(node.provider).route('/', router).fetch)
    servers.push({ server, node })
    return server.url
  }

  it('without TRUST_PROXY the socket peer counts and a forged X-Forwarded-For neither changes it nor resets the counter', async () => {
    const base = await start()
    await freshWindow(60, 5000)
    const seen: string[] = []
    const statuses: number[] = []
    for (const xff of ['1.1.1.1', '2.2.2.2', '3.3.3.3']) {
      const res = await fetch(`${base}/ip`, { headers: { 'x-forwarded-for': xff } })
      statuses.push(res.status)
      if (res.ok) seen.push(((await res.json()) as { ip: string }).ip)
      else await res.text()
    }
    expect(seen.map(normalizeIp)).toEqual(['127.0.0.1', '127.0.0.1'])
    expect(statuses).toEqual([200, 200, 429])
  })

  it('TRUST_PROXY=loopback: the address the local proxy appended counts', async () => {
    const base = await start('loopback')
    await freshWindow(60, 5000)
    const res = await fetch(`${base}/ip`, { headers: { 'x-forwarded-for': '9.9.9.9, 2.2.2.2' } })
    expect(await res.json()).toEqual({ ip: '2.2.2.2' })
    // Each forwarded client has its own counter.
    for (let i = 0; i < 2; i++) await (await fetch(`${base}/ip`, { headers: { 'x-forwarded-for': '4.4.4.4' } })).text()
    expect((await fetch(`${base}/ip`, { headers: { 'x-forwarded-for': '4.4.4.4' } })).status).toBe(429)
    expect((await fetch(`${base}/ip`, { headers: { 'x-forwarded-for': '5.5.5.5' } })).status).toBe(200)
  })
})
