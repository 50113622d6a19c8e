import { afterAll, describe, expect, it } from 'vitest'
import { app as healthApp } from '../../functions/health/app'
import { createNodeServices, type NodeServices } from '../../infra/services'
import { createPlatformApp } from '../../lib/app'
import { MemoryKv } from '../../lib/kv/memory'
import { useHarness } from '../support/harness'

const DASHBOARD = 'http://localhost:3000' // the harness's APP_ORIGIN

const h = useHarness({ env: { HEALTH_PROBE_URLS: 'none=http://127.0.0.1:1/x' } })
const extra: NodeServices[] = []
afterAll(async () => {
  for (const node of extra) await node.close()
})

const preflight = (app: { request: typeof h.web.request }, origin: string, path = '/api/health') =>
  app.request(path, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, x-csrf-token' },
  })

/**
 * The web stack with `APP_ORIGIN` from the environment, built the way the harness builds it (createNodeServices
 * reads the env) but on this file's database, so the file still boots one store.
 */
async function webWithOrigins(appOrigin: string) {
  const node = await createNodeServices({
    env: { APP_ORIGIN: appOrigin, DATA_DIR: '.test-data' },
    database: { db: h.services.db, adapter: 'pglite', close: async () => {} },
    kv: new MemoryKv(),
  })
  extra.push(node)
  return createPlatformApp(node.provider).route('/', healthApp)
}

const varyList = (res: Response) => (res.headers.get('vary') ?? '').toLowerCase().split(/\s*,\s*/)

describe('cors: the dashboard origin', () => {
  it('preflight from APP_ORIGIN: 204 echoing the origin, with credentials, methods and headers', async () => {
    const res = await preflight(h.web, DASHBOARD)
    expect(res.status).toBe(204)
    expect(res.headers.get('access-control-allow-origin')).toBe(DASHBOARD)
    expect(res.headers.get('access-control-allow-credentials')).toBe('true')
    expect(res.headers.get('access-control-allow-methods')).toContain('POST')
    const allowed = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/\s*,\s*/)
    expect(allowed).toEqual(expect.arrayContaining(['content-type', 'authorization', 'x-csrf-token', 'x-xsrf-token']))
    expect(varyList(res)).toContain('origin')
  })

  it('a credentialed GET from APP_ORIGIN is allowed, never with a wildcard, and exposes the limit and request-id headers', async () => {
    const res = await h.web.request('/api/health', { headers: { origin: DASHBOARD, cookie: h.users.alice.cookie } })
    expect(res.status).toBe(200)
    expect(res.headers.get('access-control-allow-origin')).toBe(DASHBOARD)
    expect(res.headers.get('access-control-allow-credentials')).toBe('true')
    const exposed = (res.headers.get('access-control-expose-headers') ?? '').toLowerCase().split(/\s*,\s*/)
    expect(exposed).toEqual(
      expect.arrayContaining(['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after', 'x-request-id']),
    )
    expect(varyList(res)).toContain('origin')
  })

  it('error responses carry the CORS headers too (the dashboard must read 401s and 404s)', async () => {
    for (const path of ['/api/admin/health', '/api/nope']) {
      const res = await h.web.request(path, { headers: { origin: DASHBOARD } })
      expect(res.status).toBeGreaterThanOrEqual(400)
      expect(res.headers.get('access-control-allow-origin'), path).toBe(DASHBOARD)
      expect(res.headers.get('access-control-allow-credentials'), path).toBe('true')
    }
  })

  it('the backend app shares the same CORS policy', async () => {
    const ok = await preflight(h.backend, DASHBOARD, '/health')
    expect(ok.headers.get('access-control-allow-origin')).toBe(DASHBOARD)
    const evil = await preflight(h.backend, 'http://evil.example', '/health')
    expect(evil.headers.get('access-control-allow-origin')).toBeNull()
  })
})

describe('cors: other origins', () => {
  it('preflight from http://evil.example: no Access-Control-Allow-Origin', async () => {
    const res = await preflight(h.web, 'http://evil.example')
    expect(res.headers.get('access-control-allow-origin')).toBeNull()
  })

  it('a GET from http://evil.example is answered without Access-Control-Allow-Origin (the browser withholds it)', async () => {
    const res = await h.web.request('/api/health', { headers: { origin: 'http://evil.example', cookie: h.users.admin.cookie } })
    expect(res.headers.get('access-control-allow-origin')).toBeNull()
  })

  it.each([
    'http://localhost:3000.evil.example',
    'http://localhost:300',
    'http://localhost:30000',
    'https://localhost:3000',
    'http://localhost',
    'http://LOCALHOST:3000',
    'http://localhost:3000/',
    'null',
    '*',
  ])('look-alike origin %s is not allowed', async (origin) => {
    const res = await preflight(h.web, origin)
    expect(res.headers.get('access-control-allow-origin')).toBeNull()
    const get = await h.web.request('/api/health', { headers: { origin } })
    expect(get.headers.get('access-control-allow-origin')).toBeNull()
  })

  it('no Origin header: no Access-Control-Allow-Origin', async () => {
    const res = await h.web.request('/api/health')
    expect(res.headers.get('access-control-allow-origin')).toBeNull()
  })
})

describe('cors: a comma-separated APP_ORIGIN list', () => {
  it('allows every listed origin and nothing else', async () => {
    const app = await webWithOrigins('http://a.test,http://b.test')
    for (const origin of ['http://a.test', 'http://b.test']) {
      const pre = await preflight(app, origin)
      expect(pre.headers.get('access-control-allow-origin'), origin).toBe(origin)
      expect(pre.headers.get('access-control-allow-credentials')).toBe('true')
      const get = await app.request('/api/health', { headers: { origin } })
      expect(get.headers.get('access-control-allow-origin'), origin).toBe(origin)
    }
    for (const origin of ['http://c.test', DASHBOARD, 'http://a.test,http://b.test']) {
      const pre = await preflight(app, origin)
      expect(pre.headers.get('access-control-allow-origin'), origin).toBeNull()
    }
  })

  it('spaces and trailing slashes in the list are tolerated', async () => {
    const app = await webWithOrigins(' http://a.test/ ,  http://b.test ')
    expect((await preflight(app, 'http://a.test')).headers.get('access-control-allow-origin')).toBe('http://a.test')
    expect((await preflight(app, 'http://b.test')).headers.get('access-control-allow-origin')).toBe('http://b.test')
  })
})
