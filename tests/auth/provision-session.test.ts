import { beforeAll, describe, expect, it } from 'vitest'
import { createPlatformApp, createRouter } from '../../lib/app'
import { provisionSession } from '../../functions/agents/provision-session'
import { ADMIN_EMAIL, BROWSER, useHarness } from '../support/harness'

let app: ReturnType<typeof createPlatformApp>

const h = useHarness()
beforeAll(async () => {
  const r = createRouter()
  r.post('/api/provision', async (c) => c.json(await provisionSession(c)))
  // The spec's case of a session with an admin email but no user id, which our joined sessions never yield.
  r.post('/no-id/:email', async (c) => {
    const email = c.req.param('email')
    c.set('user', { id: '', email, name: '', isAdmin: h.services.config.ADMIN_EMAILS.includes(email.toLowerCase()) })
    return c.json(await provisionSession(c))
  })
  app = createPlatformApp(() => h.services).route('/', r)
})

const provision = (cookie: string | undefined, body: unknown = {}, extra: Record<string, string> = {}) =>
  app.request('/api/provision', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}), ...extra },
    body: JSON.stringify(body),
  })

describe('provisionSession (admin session fallback on POST /api/provision)', () => {
  it('no session is 401', async () => {
    const res = await provision(undefined, { email: ADMIN_EMAIL })
    expect(res.status).toBe(401)
    expect(await res.json()).toEqual({ error: 'Unauthorized', code: 'UNAUTHORIZED' })
  })

  it('a non-admin session is that user, not an admin', async () => {
    const { alice } = h.users
    expect(await (await provision(alice.cookie)).json()).toEqual({ id: alice.id, email: alice.email, name: 'Alice', isAdmin: false })
  })

  it("an admin's email in the body does not elevate a non-admin session", async () => {
    const { alice } = h.users
    const body = await (await provision(alice.cookie, { email: ADMIN_EMAIL, isAdmin: true, id: h.users.admin.id })).json()
    expect(body).toEqual({ id: alice.id, email: alice.email, name: 'Alice', isAdmin: false })
  })

  it('an admin session is the admin user, flagged isAdmin', async () => {
    const { admin } = h.users
    expect(await (await provision(admin.cookie, { email: h.users.alice.email })).json()).toEqual({
      id: admin.id,
      email: ADMIN_EMAIL,
      name: 'Admin',
      isAdmin: true,
    })
  })

  it('cookie-authenticated, so a foreign Origin is refused', async () => {
    const res = await provision(h.users.admin.cookie, {}, { origin: 'https://evil.example' })
    expect(res.status).toBe(403)
    expect((await provision(h.users.admin.cookie, {}, { origin: BROWSER.origin })).status).toBe(200)
  })

  it('a session with no user id: a synthetic admin session for an admin email, 401 otherwise', async () => {
    const res = await app.request(`/no-id/${encodeURIComponent('Admin@Example.com')}`, { method: 'POST' })
    expect(await res.json()).toEqual({ id: 'admin:admin@example.com', email: 'Admin@Example.com', name: 'Admin@Example.com', isAdmin: true, synthetic: true })
    expect((await app.request(`/no-id/${encodeURIComponent('alice@example.com')}`, { method: 'POST' })).status).toBe(401)
  })
})
