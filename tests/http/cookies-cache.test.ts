import { afterAll, describe, expect, it } from 'vitest'
import { issueState, STATE_COOKIE } from '../../functions/oauth/state'
import { createNodeServices, type NodeServices } from '../../infra/services'
import { createPlatformApp, createRouter } from '../../lib/app'
import { SESSION_COOKIE, startSession } from '../../lib/auth/session'
import { managedServices } from '../../lib/services/managed'
import { MemoryKv } from '../../lib/kv/memory'
import { insertApiKey } from '../auth/helpers'
import { useHarness } from '../support/harness'
import { type Loopback, serveFetch } from '../support/loopback'

/** Issue #9 finding 12: `Secure` behind a trusted TLS-terminating proxy, and `no-store` on personal data. */
const h = useHarness()

/** Both cookie-setting paths: the session cookie and Google's OAuth state cookie. */
const cookieProbes = () => {
  const r = createRouter()
  r.post('/probe/session', async (c) => {
    await startSession(c, h.users.alice.id)
    return c.json({ ok: true })
  })
  r.post('/probe/oauth-state', async (c) => {
    await issueState(c, 'state-secret', { verifier: 'v', nonce: 'n', redirectUri: 'http://localhost/cb' })
    return c.json({ ok: true })
  })
  return r
}

const cookieOf = (res: Response, name: string) => res.headers.getSetCookie().find((s) => s.startsWith(`${name}=`))
const isSecure = (cookie: string | undefined) => {
  expect(cookie).toBeDefined()
  return /;\s*Secure(;|$)/i.test(cookie!)
}

describe('Secure cookies on a real Node socket (peer 127.0.0.1)', () => {
  const running: Array<{ server: Loopback; node: NodeServices }> = []
  afterAll(async () => {
    for (const { server, node } of running) {
      await server.close()
      await node.close()
    }
  })

  async function start(trustProxy?: string) {
    const node = await createNodeServices({
      env: { APP_ORIGIN: 'http://localhost:3000', DATA_DIR: '.test-data', ...(trustProxy ? { TRUST_PROXY: trustProxy } : {}) },
      database: { db: h.db, adapter: 'pglite', close: async () => {} },
      kv: new MemoryKv(),
    })
    const server = await serveFetch(createPlatformApp(node.provider).route('/', cookieProbes()).fetch)
    running.push({ server, node })
    const base = server.url
    return async (path: string, headers: Record<string, string> = {}) => {
      const res = await fetch(`${base}${path}`, { method: 'POST', headers })
      expect(res.status).toBe(200)
      return res
    }
  }

  it('TRUST_PROXY=loopback and X-Forwarded-Proto https: both cookies are Secure', async () => {
    const post = await start('loopback')
    for (const proto of ['https', 'HTTPS', 'https, http']) {
      expect(isSecure(cookieOf(await post('/probe/session', { 'x-forwarded-proto': proto }), SESSION_COOKIE))).toBe(true)
      expect(isSecure(cookieOf(await post('/probe/oauth-state', { 'x-forwarded-proto': proto }), STATE_COOKIE))).toBe(true)
    }
  })

  it('a trusted proxy that says http (or nothing) gets no Secure: the cookie must still work over plain http', async () => {
    const post = await start('loopback')
    expect(isSecure(cookieOf(await post('/probe/session', { 'x-forwarded-proto': 'http' }), SESSION_COOKIE))).toBe(false)
    expect(isSecure(cookieOf(await post('/probe/session'), SESSION_COOKIE))).toBe(false)
  })

  it('X-Forwarded-Proto from a peer that is not a trusted proxy is ignored', async () => {
    for (const setting of [undefined, '10.0.0.1']) {
      const post = await start(setting)
      expect(isSecure(cookieOf(await post('/probe/session', { 'x-forwarded-proto': 'https' }), SESSION_COOKIE))).toBe(false)
      expect(isSecure(cookieOf(await post('/probe/oauth-state', { 'x-forwarded-proto': 'https' }), STATE_COOKIE))).toBe(false)
    }
  })
})

describe('Secure cookies by the URL scheme (Workers, and no socket)', () => {
  it('an https URL gives Secure; an http one does not, whatever X-Forwarded-Proto claims', async () => {
    const app = createPlatformApp(() => h.services).route('/', cookieProbes())
    expect(isSecure(cookieOf(await app.request('https://api.example.com/probe/session', { method: 'POST' }), SESSION_COOKIE))).toBe(true)
    const plain = await app.request('http://api.example.com/probe/session', { method: 'POST', headers: { 'x-forwarded-proto': 'https' } })
    expect(isSecure(cookieOf(plain, SESSION_COOKIE))).toBe(false)
  })

  it('a Worker trusts its URL only, never a client-sent X-Forwarded-Proto', async () => {
    const services = managedServices({})
    const probe = createRouter()
    probe.get('/https', (c) => c.json({ https: c.var.services.isHttps(c) }))
    const app = createPlatformApp(services).route('/', probe)
    expect(await (await app.request('https://w.example.com/https', {}, {})).json()).toEqual({ https: true })
    expect(await (await app.request('http://w.example.com/https', { headers: { 'x-forwarded-proto': 'https' } }, {})).json()).toEqual({ https: false })
  })
})

describe('Cache-Control: no-store on authenticated responses', () => {
  it('/api/user, /api/keys, /api/devices and /api/trial with a session are no-store', async () => {
    for (const path of ['/api/user', '/api/keys', '/api/devices', '/api/trial']) {
      const res = await h.web.request(path, { headers: { cookie: h.users.alice.cookie } })
      expect(res.status, path).toBe(200)
      expect(res.headers.get('cache-control'), path).toBe('no-store')
    }
  })

  it('an API-key caller of the backend gets no-store too, and so does a refused credential', async () => {
    const { key } = await insertApiKey(h.db, h.users.alice.id)
    const res = await h.backend.request('/api/installations', { headers: { authorization: `Bearer ${key}`, 'cf-connecting-ip': '203.0.113.40' } })
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    const refused = await h.web.request('/api/user', { headers: { cookie: `${SESSION_COOKIE}=${'0'.repeat(64)}` } })
    expect(refused.status).toBe(401)
    expect(refused.headers.get('cache-control')).toBe('no-store')
  })

  it('a session cookie is recognised as the session reader reads it, blanks around its name too', async () => {
    const res = await h.web.request('/api/user', { headers: { cookie: `theme=dark;  ${SESSION_COOKIE} =${h.users.alice.cookie.split('=')[1]}` } })
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
  })

  it('routes that declare noStore answer no-store without credentials: a nonce, a CSRF token, the session state, a challenge', async () => {
    const anonymous = [
      ['GET', '/api/auth/nonce'],
      ['POST', '/api/auth/nonce'],
      ['GET', '/api/auth/csrf'],
      ['GET', '/api/auth/session'],
    ] as const
    for (const [method, path] of anonymous) {
      const res = await h.web.request(path, { method, headers: { 'cf-connecting-ip': '203.0.113.41' } })
      expect(res.status, `${method} ${path}`).toBe(200)
      expect(res.headers.get('cache-control'), `${method} ${path}`).toBe('no-store')
    }
    // The same route with a session: still no-store, and the session is the caller's.
    const signedIn = await h.web.request('/api/auth/session', { headers: { cookie: h.users.alice.cookie } })
    expect((await signedIn.json()).user?.id).toBe(h.users.alice.id)
    expect(signedIn.headers.get('cache-control')).toBe('no-store')
  })

  it('a public response to a request without credentials keeps its own caching', async () => {
    const res = await h.web.request('/api/version')
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toMatch(/^max-age=/)
    // Another site's cookie is not a session.
    const other = await h.web.request('/api/version', { headers: { cookie: 'theme=dark; not-service-session=x' } })
    expect(other.headers.get('cache-control')).toMatch(/^max-age=/)
    // No credentials, no caching header from us at all (the 404 is built by notFound, not a route).
    expect((await h.web.request('/api/no-such-route')).headers.get('cache-control')).toBeNull()
  })
})
