import { describe, expect, it } from 'vitest'
import { BROWSER, useHarness } from '../support/harness'

const h = useHarness()

describe('405 with Allow for a known path and a wrong method', () => {
  it.each([
    ['web', 'DELETE', '/api/health', 'GET, HEAD'],
    ['web', 'PUT', '/api/keys', 'GET, HEAD, POST'],
    ['web', 'POST', '/api/keys/00000000-0000-0000-0000-000000000000', 'GET, HEAD, DELETE'],
    ['web', 'GET', '/api/auth/login', 'POST'],
    ['backend', 'GET', '/api/validate-key', 'POST'],
  ] as const)('%s %s %s → 405, Allow: %s', async (app, method, path, allow) => {
    const res = await h[app === 'web' ? 'web' : 'backend'].request(path, { method, headers: BROWSER })
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toBe(allow)
    expect(await res.json()).toEqual({ error: 'Method not allowed', code: 'METHOD_NOT_ALLOWED' })
  })

  it('an unknown path stays 404 NOT_FOUND', async () => {
    const res = await h.web.request('/api/nothing-here', { method: 'DELETE' })
    expect(res.status).toBe(404)
    expect(await res.json()).toEqual({ error: 'Not found', code: 'NOT_FOUND' })
  })

  it('a CORS preflight is still answered by CORS, not 405', async () => {
    const res = await h.web.request('/api/keys', {
      method: 'OPTIONS',
      headers: { origin: BROWSER.origin, 'access-control-request-method': 'POST' },
    })
    expect(res.status).toBe(204)
    expect(res.headers.get('access-control-allow-origin')).toBe(BROWSER.origin)
  })
})

describe('a trailing slash names the same route', () => {
  it('GET /api/health/ answers as /api/health, with no redirect', async () => {
    const res = await h.web.request('/api/health/')
    expect(res.status).toBe((await h.web.request('/api/health')).status)
    expect(res.headers.get('location')).toBeNull()
  })

  it('a signed-in GET /api/keys/ lists the keys', async () => {
    const res = await h.web.request('/api/keys/', { headers: { cookie: h.users.alice.cookie } })
    expect(res.status).toBe(200)
    expect(Array.isArray(((await res.json()) as { keys: unknown[] }).keys)).toBe(true)
  })
})
