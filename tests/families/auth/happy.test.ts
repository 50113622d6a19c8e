import { eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { referrals, sessions, users } from '../../../schema'
import { PASSWORD, useHarness } from '../../support/harness'
import { csrfHeader, json, login, register, sessionCookie } from './flow'

const h = useHarness()

describe('auth: happy paths', () => {
  it('registers with a lower-cased email, a 7-day trial, and no session', async () => {
    const res = await register(h, { email: 'New.User@Example.COM', password: 'password123', name: 'New' })
    expect(res.status).toBe(201)
    expect(res.headers.get('set-cookie')).toBeNull()
    const body = await res.json()
    expect(body).toEqual({ id: expect.any(String), email: 'new.user@example.com', name: 'New' })
    const [row] = await h.db.select().from(users).where(eq(users.id, body.id))
    expect(row.passwordHash).toMatch(/^\$2[aby]\$04\$/)
    expect(row.trialEndsAt!.getTime() - row.trialStartedAt!.getTime()).toBe(7 * 24 * 60 * 60 * 1000)
    expect(row.referralCode).toMatch(/^[A-Z0-9]{10}$/)
  })

  it('defaults the name to the email', async () => {
    const res = await register(h, { email: 'noname@example.com', password: 'password123' })
    expect((await res.json()).name).toBe('noname@example.com')
  })

  it('records a referral (code case-insensitive) and credits nobody before verification', async () => {
    const [referrer] = await h.db.select().from(users).where(eq(users.email, 'new.user@example.com'))
    const res = await register(h, { email: 'friend@example.com', password: 'password123', referralCode: referrer.referralCode!.toLowerCase() })
    expect(res.status).toBe(201)
    const [friend] = await h.db.select().from(users).where(eq(users.email, 'friend@example.com'))
    const [after] = await h.db.select().from(users).where(eq(users.id, referrer.id))
    const [row] = await h.db.select().from(referrals).where(eq(referrals.referredId, friend.id))
    expect(row).toMatchObject({ referrerId: referrer.id, credits: 5, creditedAt: null })
    expect(friend.credits).toBe(0)
    expect(after.credits).toBe(referrer.credits)
  })

  it('issues a CSRF token whose header is token:signed', async () => {
    const res = await h.web.request('/api/auth/csrf')
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body.header).toBe(`${body.token}:${body.signed}`)
    expect(body.signed).toMatch(/^[0-9a-f]{64}$/)
  })

  it('signs in case-insensitively both ways and sets the session cookie', async () => {
    for (const email of ['NEW.USER@example.com', 'new.user@EXAMPLE.com']) {
      const res = await login(h, email, 'password123', `203.0.113.${email.length}`)
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ ok: true, user: { id: expect.any(String), name: 'New' } })
      const cookie = res.headers.get('set-cookie')!
      expect(cookie).toMatch(/^service-session=[0-9a-f]{64};/)
      expect(cookie).toContain('HttpOnly')
      expect(cookie).toContain('SameSite=Lax')
      expect(cookie).toContain('Path=/')
      expect(cookie).toContain('Max-Age=2592000')
      expect(cookie).not.toContain('Secure') // plain http here; Secure is added over HTTPS
    }
  })

  it('accepts the CSRF header under x-xsrf-token too, and adds Secure over HTTPS', async () => {
    const res = await h.web.request(
      'https://api.example.com/api/auth/login',
      json({ email: h.users.alice.email, password: PASSWORD }, { 'x-xsrf-token': await csrfHeader(h), 'cf-connecting-ip': '203.0.113.50' }),
    )
    expect(res.status).toBe(200)
    expect(res.headers.get('set-cookie')).toContain('Secure')
  })

  it('creates a new session at each sign-in, storing only its hash', async () => {
    const a = sessionCookie(await login(h, h.users.bob.email, PASSWORD, '203.0.113.60'))
    const b = sessionCookie(await login(h, h.users.bob.email, PASSWORD, '203.0.113.61'))
    expect(a).not.toBe(b)
    const rows = await h.db.select().from(sessions).where(eq(sessions.userId, h.users.bob.id))
    const raw = a.split('=')[1]
    expect(rows.some((r) => r.tokenHash === raw)).toBe(false)
    expect(rows.length).toBeGreaterThanOrEqual(3)
  })

  it('reports the session, then nothing after sign-out', async () => {
    const cookie = sessionCookie(await login(h, 'new.user@example.com', 'password123', '203.0.113.70'))
    let res = await h.web.request('/api/auth/session', { headers: { cookie } })
    const body = await res.json()
    expect(body.user).toEqual({ id: expect.any(String), email: 'new.user@example.com', name: 'New', isAdmin: false })
    expect(new Date(body.expires).getTime()).toBeGreaterThan(Date.now() + 29 * 24 * 60 * 60 * 1000)

    res = await h.web.request('/api/auth/signout', { method: 'POST', headers: { cookie, origin: 'http://localhost:3000' } })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ ok: true })
    expect(res.headers.get('set-cookie')).toMatch(/^service-session=;.*Max-Age=0/)
    res = await h.web.request('/api/auth/session', { headers: { cookie } })
    expect(await res.json()).toEqual({ user: null, expires: null })
  })

  it('answers sign-out without a session with 200', async () => {
    const res = await h.web.request('/api/auth/signout', { method: 'POST' })
    expect(res.status).toBe(200)
  })

  it('reports the admin flag for admins', async () => {
    const res = await h.web.request('/api/auth/session', { headers: { cookie: h.users.admin.cookie } })
    expect((await res.json()).user.isAdmin).toBe(true)
  })

  it("reports the signed-in user's trial", async () => {
    const cookie = sessionCookie(await login(h, 'noname@example.com', 'password123', '203.0.113.80'))
    const res = await h.web.request('/api/trial', { headers: { cookie } })
    expect(res.status).toBe(200)
    const trial = await res.json()
    expect(trial).toMatchObject({ active: true, daysRemaining: 7 })
    expect(new Date(trial.endsAt).getTime() - new Date(trial.startedAt).getTime()).toBe(7 * 24 * 60 * 60 * 1000)
  })
})
