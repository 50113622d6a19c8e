import { eq, sql } from 'drizzle-orm'
import { beforeAll, describe, expect, it, vi } from 'vitest'
import { emailVerifications, users } from '../../../schema'
import { useHarness } from '../../support/harness'
import { MailProviderError } from '../../../lib/mail/resend'
import { lastVerificationToken, login, register, resendVerification, sessionCookie, verifyEmail } from './flow'

const h = useHarness()
beforeAll(async () => {
  vi.spyOn(console, 'info').mockImplementation(() => {})
})

const INVALID = { error: 'Invalid or expired verification token', code: 'INVALID_VERIFICATION_TOKEN' }
let n = 0
async function signUp() {
  const email = `err${++n}@example.com`
  const res = await register(h, { email, password: 'password123' }, `198.51.100.${100 + n}`)
  expect(res.status).toBe(201)
  return { email, id: (await res.json()).id as string, token: await lastVerificationToken(h, email) }
}
const verifiedAt = async (id: string) => (await h.db.select().from(users).where(eq(users.id, id)))[0].emailVerifiedAt

describe('email verification: refusals', () => {
  it('a missing token is 400 VALIDATION; malformed and unknown tokens are 400 INVALID_VERIFICATION_TOKEN', async () => {
    const missing = await verifyEmail(h, undefined)
    expect(missing.status).toBe(400)
    expect((await missing.json()).code).toBe('VALIDATION')
    for (const token of ['abc', 'g'.repeat(64), 'a'.repeat(64), 'a'.repeat(300), 42]) {
      const res = await verifyEmail(h, token)
      expect(res.status, String(token)).toBe(400)
      if (typeof token === 'string' && token.length <= 256) expect(await res.json()).toEqual(INVALID)
    }
  })

  it('a used token is refused the second time', async () => {
    const u = await signUp()
    expect((await verifyEmail(h, u.token)).status).toBe(200)
    const again = await verifyEmail(h, u.token)
    expect(again.status).toBe(400)
    expect(await again.json()).toEqual(INVALID)
  })

  it('an expired token is refused and verifies nothing', async () => {
    const u = await signUp()
    await h.db.update(emailVerifications).set({ expiresAt: sql`now() - interval '1 second'` }).where(eq(emailVerifications.userId, u.id))
    expect(await (await verifyEmail(h, u.token)).json()).toEqual(INVALID)
    expect(await verifiedAt(u.id)).toBeNull()
  })

  it('a token verifies only the address it was sent to: after an email change it is refused', async () => {
    const u = await signUp()
    await h.db.update(users).set({ email: `changed-${u.email}` }).where(eq(users.id, u.id))
    expect(await (await verifyEmail(h, u.token)).json()).toEqual(INVALID)
    expect(await verifiedAt(u.id)).toBeNull()
  })

  it('resend for an already verified address is 409 EMAIL_ALREADY_VERIFIED and mails nothing', async () => {
    const res = await resendVerification(h, h.users.alice.cookie)
    expect(res.status).toBe(409)
    expect(await res.json()).toEqual({ error: 'Email already verified', code: 'EMAIL_ALREADY_VERIFIED' })
    expect(await h.db.select().from(emailVerifications).where(eq(emailVerifications.userId, h.users.alice.id))).toEqual([])
  })

  it('resend while the mail provider fails: 503 `MAIL_UNAVAILABLE`, no new link kept, the earlier link still works', async () => {
    const u = await signUp()
    const cookie = sessionCookie(await login(h, u.email, 'password123', '203.0.113.72'))
    const tokensOf = () => h.db.select().from(emailVerifications).where(eq(emailVerifications.userId, u.id))
    expect(await tokensOf()).toHaveLength(1)
    vi.spyOn(console, 'error').mockImplementation(() => {})
    const send = vi.spyOn(h.services.mail, 'send').mockRejectedValueOnce(new MailProviderError(503, 'Resend refused email-verification mail (503)'))
    try {
      const res = await resendVerification(h, cookie, { 'cf-connecting-ip': '203.0.114.120' })
      expect(res.status).toBe(503)
      expect(await res.json()).toEqual({ error: 'Verification email could not be sent', code: 'MAIL_UNAVAILABLE' })
    } finally {
      send.mockRestore()
    }
    expect(await tokensOf()).toHaveLength(1) // the unsent one removed, the earlier one kept
    expect((await verifyEmail(h, u.token)).status).toBe(200)
    expect(await verifiedAt(u.id)).toBeInstanceOf(Date)
  })

  it('resend is limited to 3 per hour per user: the 4th is 429 with Retry-After, whatever the IP', async () => {
    const u = await signUp()
    const cookie = sessionCookie(await login(h, u.email, 'password123', '203.0.113.70'))
    for (let i = 0; i < 3; i++) expect((await resendVerification(h, cookie, { 'cf-connecting-ip': `203.0.114.${i}` })).status).toBe(200)
    const limited = await resendVerification(h, cookie, { 'cf-connecting-ip': '203.0.114.99' })
    expect(limited.status).toBe(429)
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    // Another user is not affected.
    const other = await signUp()
    const otherCookie = sessionCookie(await login(h, other.email, 'password123', '203.0.113.71'))
    expect((await resendVerification(h, otherCookie)).status).toBe(200)
  })
})
