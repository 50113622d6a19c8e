import { eq } from 'drizzle-orm'
import { beforeAll, describe, expect, it, vi } from 'vitest'
import { sha256Hex } from '../../../lib/crypto'
import { emailVerifications, mailOutbox, users } from '../../../schema'
import { useHarness } from '../../support/harness'
import { lastVerificationToken, login, register, resendVerification, sessionCookie, verifyEmail } from './flow'

const h = useHarness()
beforeAll(async () => {
  vi.spyOn(console, 'info').mockImplementation(() => {})
})

const userByEmail = async (email: string) => (await h.db.select().from(users).where(eq(users.email, email)))[0]

describe('email verification: happy paths', () => {
  it('sign-up mails a {base_url}/verify-email link; the account starts unverified and may sign in', async () => {
    const res = await register(h, { email: 'Vera@Example.com', password: 'password123' }, '198.51.100.60')
    expect(res.status).toBe(201)
    const row = await userByEmail('vera@example.com')
    expect(row.emailVerifiedAt).toBeNull()
    const mails = await h.db.select().from(mailOutbox).where(eq(mailOutbox.to, 'vera@example.com'))
    expect(mails.map((m) => m.kind)).toEqual(['email-verification'])
    const token = await lastVerificationToken(h, 'vera@example.com')
    // Only the SHA-256 is stored, with the address it was sent to and a 24-hour expiry.
    const [stored] = await h.db.select().from(emailVerifications).where(eq(emailVerifications.userId, row.id))
    expect(stored).toMatchObject({ tokenHash: await sha256Hex(token), email: 'vera@example.com', usedAt: null })
    const hours = (stored.expiresAt.getTime() - stored.createdAt.getTime()) / 3_600_000
    expect(hours).toBeCloseTo(24, 1)
    const cookie = sessionCookie(await login(h, 'vera@example.com', 'password123', '203.0.113.60'))
    const me = await (await h.web.request('/api/user', { headers: { cookie } })).json()
    expect(me).toMatchObject({ emailVerified: false, isAdmin: false })
  })

  it('POST /api/auth/verify-email {token} → 200 {success: true}; the profile then says emailVerified', async () => {
    const token = await lastVerificationToken(h, 'vera@example.com')
    // Opened in the browser that signed up: its session stays, and the password keeps working.
    const cookie = sessionCookie(await login(h, 'vera@example.com', 'password123', '203.0.113.61'))
    const res = await verifyEmail(h, token, undefined, cookie)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ success: true })
    const row = await userByEmail('vera@example.com')
    expect(row.emailVerifiedAt).toBeInstanceOf(Date)
    expect(await (await h.web.request('/api/user', { headers: { cookie } })).json()).toMatchObject({ emailVerified: true })
    expect((await login(h, 'vera@example.com', 'password123', '203.0.113.63')).status).toBe(200)
  })

  it('resend mails a new link for an unverified user; only the newest link works', async () => {
    await register(h, { email: 'remi@example.com', password: 'password123' }, '198.51.100.61')
    const first = await lastVerificationToken(h, 'remi@example.com')
    const cookie = sessionCookie(await login(h, 'remi@example.com', 'password123', '203.0.113.62'))
    const res = await resendVerification(h, cookie)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ success: true })
    expect(res.headers.get('ratelimit-limit')).toBe('3')
    const second = await lastVerificationToken(h, 'remi@example.com')
    expect(second).not.toBe(first)
    expect((await verifyEmail(h, first)).status).toBe(400)
    expect((await verifyEmail(h, second)).status).toBe(200)
    expect((await userByEmail('remi@example.com')).emailVerifiedAt).toBeInstanceOf(Date)
  })

  it('the token is accepted in upper-case hex too', async () => {
    await register(h, { email: 'upper@example.com', password: 'password123' }, '198.51.100.62')
    const token = await lastVerificationToken(h, 'upper@example.com')
    expect((await verifyEmail(h, token.toUpperCase())).status).toBe(200)
  })

  it('both routes are in the OpenAPI document', async () => {
    const doc = await (await h.web.request('/api/openapi.json')).json()
    expect(doc.paths['/api/auth/verify-email'].post).toBeDefined()
    expect(doc.paths['/api/auth/verify-email/resend'].post).toBeDefined()
  })
})
