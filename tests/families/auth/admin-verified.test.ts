import { desc, eq } from 'drizzle-orm'
import { beforeAll, describe, expect, it, vi } from 'vitest'
import { requireAdminIdentity } from '../../../functions/backend/admin'
import { signedIdentityHeaders } from '../../../lib/auth/identity'
import { createPlatformApp, createRouter } from '../../../lib/app'
import { installations, mailOutbox, users } from '../../../schema'
import { insertApiKey } from '../../auth/helpers'
import { ADMIN_EMAIL, useHarness } from '../../support/harness'
import { json, login, register, sessionCookie } from './flow'

/** Finding 1: "Admin by sign-up". Admin rights follow a verified email in ADMIN_EMAILS, on the web and the backend. */
const HMAC = 'test-hmac'
let probe: ReturnType<typeof createPlatformApp>
let cookie: string
let attackerId: string
let attackerKey: string

const h = useHarness({ env: { HMAC_SECRET: HMAC } })
beforeAll(async () => {
  vi.spyOn(console, 'info').mockImplementation(() => {})
  const r = createRouter()
  r.get('/probe/admin', requireAdminIdentity, (c) => c.json({ ok: true }))
  probe = createPlatformApp(() => h.services).route('/', r)
  // The address is nobody's yet (the seeded admin is removed): anyone may sign up with it, unverified.
  await h.db.delete(users).where(eq(users.email, ADMIN_EMAIL))
  const res = await register(h, { email: 'Admin@Example.com', password: 'password123', name: 'Mallory' }, '198.51.100.90')
  expect(res.status).toBe(201)
  attackerId = (await res.json()).id
  cookie = sessionCookie(await login(h, 'Admin@Example.com', 'password123', '203.0.113.90'))
  attackerKey = (await insertApiKey(h.db, attackerId)).key
})

const adminList = () => h.web.request('/api/admin/invites', { headers: { cookie } })
const adminCreate = () => h.web.request('/api/admin/invites', json({ email: 'guest@example.com' }, { cookie }))
const registerForBob = (key: string) =>
  h.backend.request('/api/register-home', {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'cf-connecting-ip': '198.18.9.9' },
    body: JSON.stringify({ userId: h.users.bob.id, gatewayToken: 'attacker-gateway' }),
  })
const signedAdmin = () => signedIdentityHeaders(HMAC, { userId: attackerId, email: ADMIN_EMAIL, role: 'user' })

describe('an unverified sign-up with an ADMIN_EMAILS address is no admin', () => {
  it('the web: session and profile say isAdmin false; admin invite list and create are 403 ADMIN_REQUIRED', async () => {
    expect(cookie).toMatch(/^service-session=/)
    const session = await (await h.web.request('/api/auth/session', { headers: { cookie } })).json()
    expect(session.user).toMatchObject({ id: attackerId, isAdmin: false })
    expect(await (await h.web.request('/api/user', { headers: { cookie } })).json()).toMatchObject({ isAdmin: false, emailVerified: false })
    for (const res of [await adminList(), await adminCreate()]) {
      expect(res.status).toBe(403)
      expect(await res.json()).toEqual({ error: 'Admin access required', code: 'ADMIN_REQUIRED' })
    }
  })

  it("the backend through the user's API key: registering a gateway token for bob is 403, nothing written", async () => {
    const res = await registerForBob(attackerKey)
    expect(res.status).toBe(403)
    expect(await h.db.select().from(installations).where(eq(installations.userId, h.users.bob.id))).toEqual([])
  })

  it('the backend through signed identity headers naming the admin email: 403 ADMIN_REQUIRED', async () => {
    const res = await probe.request('/probe/admin', { headers: await signedAdmin() })
    expect(res.status).toBe(403)
    expect(await res.json()).toEqual({ error: 'Admin access required', code: 'ADMIN_REQUIRED' })
  })

  it('once the owner verifies the address, the account is admin, for the owner only: the sign-up’s session and key end', async () => {
    const [mail] = await h.db.select().from(mailOutbox).where(eq(mailOutbox.to, ADMIN_EMAIL)).orderBy(desc(mailOutbox.createdAt)).limit(1)
    const token = /verify-email\?token=([0-9a-f]{64})/.exec(mail.text)![1]
    const verified = await h.web.request('/api/auth/verify-email', json({ token }, { 'cf-connecting-ip': '198.51.100.91' }))
    expect(verified.status).toBe(200)
    // What the sign-up made before the mailbox was proven is gone (finding 13): its session, its key, its password.
    expect((await adminList()).status).toBe(401)
    expect((await registerForBob(attackerKey)).status).toBe(401)
    expect((await login(h, 'Admin@Example.com', 'password123', '203.0.113.91')).status).toBe(401)
    // Identity headers are signed by the web tier for a live session: they follow the verified email.
    expect((await probe.request('/probe/admin', { headers: await signedAdmin() })).status).toBe(200)

    // The owner sets a password through the mailbox, signs in, and is admin on the web and, with a new key, the backend.
    await h.web.request('/api/auth/forgot-password', json({ email: ADMIN_EMAIL }, { 'cf-connecting-ip': '198.51.100.92' }))
    await (h.services.queue as { idle?: () => Promise<void> }).idle?.()
    const [resetMail] = await h.db.select().from(mailOutbox).where(eq(mailOutbox.to, ADMIN_EMAIL)).orderBy(desc(mailOutbox.createdAt)).limit(1)
    const resetToken = /reset-password\?token=([0-9a-f]{64})/.exec(resetMail.text)![1]
    const reset = await h.web.request('/api/auth/reset-password', json({ token: resetToken, password: 'the real owner now' }, { 'cf-connecting-ip': '198.51.100.93' }))
    expect(reset.status).toBe(200)
    cookie = sessionCookie(await login(h, ADMIN_EMAIL, 'the real owner now', '203.0.113.92'))
    expect((await adminList()).status).toBe(200)
    const session = await (await h.web.request('/api/auth/session', { headers: { cookie } })).json()
    expect(session.user.isAdmin).toBe(true)
    expect((await registerForBob((await insertApiKey(h.db, attackerId)).key)).status).toBe(200)
  })

})
