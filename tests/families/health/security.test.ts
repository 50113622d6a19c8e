import { eq } from 'drizzle-orm'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { app as healthApp } from '../../../functions/health/app'
import { createPlatformApp } from '../../../lib/app'
import { hashSessionToken, newSessionToken, SESSION_COOKIE } from '../../../lib/auth/session'
import { sessions } from '../../../schema'
import { useHarness } from '../../support/harness'

const h = useHarness({ env: { HEALTH_PROBE_URLS: 'none=http://127.0.0.1:1/x' } })
afterEach(() => {
  vi.restoreAllMocks()
})

const adminHealth = (cookie?: string) => h.web.request('/api/admin/health', cookie ? { headers: { cookie } } : {})

/** Things a stack trace or an internal error would carry. */
function expectNoInternals(text: string) {
  expect(text).not.toMatch(/\bat .+:\d+:\d+/) // stack frame
  expect(text).not.toMatch(/\.ts\b|\.js\b|node_modules|node:internal/)
  expect(text).not.toMatch(/"stack"/)
}

describe('health security: the admin view needs an admin session', () => {
  it('a signed-in non-admin (alice): 403 with code ADMIN_REQUIRED and no metrics', async () => {
    const res = await adminHealth(h.users.alice.cookie)
    expect(res.status).toBe(403)
    const body = await res.json()
    expect(body).toEqual({ error: expect.any(String), code: 'ADMIN_REQUIRED' })
    expect(body).not.toHaveProperty('cpu')
  })

  it('forged cookies: 401', async () => {
    for (const value of [
      newSessionToken(),
      'admin',
      "' OR 1=1 --",
      'a'.repeat(257), // over the accepted length
      '',
    ]) {
      const res = await adminHealth(`${SESSION_COOKIE}=${value}`)
      expect(res.status, `cookie value ${value.slice(0, 20)}`).toBe(401)
      expect(await res.json()).toEqual({ error: 'Unauthorized', code: 'UNAUTHORIZED' })
    }
  })

  it("the admin's token under another cookie name does not count", async () => {
    const res = await adminHealth(`session=${h.users.admin.token}`)
    expect(res.status).toBe(401)
  })

  it('an expired admin session: 401', async () => {
    const token = newSessionToken()
    await h.db.insert(sessions).values({
      tokenHash: await hashSessionToken(token),
      userId: h.users.admin.id,
      expiresAt: new Date(Date.now() - 1000),
    })
    const res = await adminHealth(`${SESSION_COOKIE}=${token}`)
    expect(res.status).toBe(401)
    expect(await res.json()).toEqual({ error: 'Unauthorized', code: 'UNAUTHORIZED' })
  })

  it('the stored token hash presented as the cookie: 401 (only the hash is stored, and it is not a credential)', async () => {
    const [row] = await h.db.select().from(sessions).where(eq(sessions.userId, h.users.admin.id))
    expect(row).toBeDefined()
    const live = await adminHealth(h.users.admin.cookie)
    expect(live.status).toBe(200) // the real token works...
    const res = await adminHealth(`${SESSION_COOKIE}=${await hashSessionToken(h.users.admin.token)}`)
    expect(res.status).toBe(401) // ...its hash does not
  })

  it('the admin view is the only one with cpu, memory and uptime', async () => {
    const res = await adminHealth(h.users.admin.cookie)
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ cpu: expect.any(Number), memory: expect.any(Number), uptime: expect.any(Number) })
  })
})

describe('health security: public endpoints leak nothing', () => {
  it.each(['/api/health', '/api/version'])('%s has no cpu, memory, uptime, runtime or adapters', async (path) => {
    const res = await h.web.request(path, { headers: { cookie: h.users.alice.cookie } })
    expect(res.status).toBe(200)
    const text = await res.text()
    for (const key of ['cpu', 'memory', 'uptime', 'runtime', 'adapters', 'load']) expect(text.toLowerCase()).not.toContain(key)
  })

  it('even with an admin cookie, /api/health stays the public shape', async () => {
    const res = await h.web.request('/api/health', { headers: { cookie: h.users.admin.cookie } })
    expect(Object.keys(await res.json()).sort()).toEqual(['health', 'status', 'timestamp'])
  })

  it('error bodies never carry a stack trace or internal paths', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {})
    const failing = createPlatformApp(() => ({
      ...h.services,
      metrics: async () => {
        throw new Error('metrics exploded at /srv/app/infra/metrics.ts:12:3')
      },
    })).route('/', healthApp)
    const responses = [
      await adminHealth(),
      await adminHealth(h.users.alice.cookie),
      await adminHealth(`${SESSION_COOKIE}=nope`),
      await h.web.request('/api/nope'),
      await h.web.request('/api/health', { method: 'POST' }),
      await failing.request('/api/health'),
      await failing.request('/api/admin/health', { headers: { cookie: h.users.admin.cookie } }),
    ]
    for (const res of responses) {
      expect(res.status).toBeGreaterThanOrEqual(400)
      const text = await res.text()
      expectNoInternals(text)
      expect(text).not.toContain('exploded')
      expect(() => JSON.parse(text)).not.toThrow()
    }
  })

  it('a cross-origin page cannot read the admin view with credentials', async () => {
    const res = await h.web.request('/api/admin/health', {
      headers: { cookie: h.users.admin.cookie, origin: 'http://evil.example' },
    })
    expect(res.headers.get('access-control-allow-origin')).toBeNull()
  })
})
