import { eq } from 'drizzle-orm'
import { beforeAll, describe, expect, it, vi } from 'vitest'
import { emailVerifications, users } from '../../../schema'
import { useHarness } from '../../support/harness'
import { lastVerificationToken, login, register, resendVerification, sessionCookie, verifyEmail } from './flow'

const h = useHarness()
beforeAll(async () => {
  vi.spyOn(console, 'info').mockImplementation(() => {})
})

// Resend without a session or with a forged one: tests/families/common-route-checks.test.ts.
describe('email verification: security', () => {
  it('resend from a foreign Origin is 403 and mails nothing', async () => {
    await register(h, { email: 'sec1@example.com', password: 'password123' }, '198.51.100.30')
    const before = await lastVerificationToken(h, 'sec1@example.com')
    const cookie = sessionCookie(await login(h, 'sec1@example.com', 'password123', '203.0.113.30'))
    const res = await resendVerification(h, cookie, { origin: 'https://evil.example' })
    expect(res.status).toBe(403)
    expect(await lastVerificationToken(h, 'sec1@example.com')).toBe(before)
  })

  it("a token verifies only its own user: bob's link never verifies another account", async () => {
    await register(h, { email: 'sec2@example.com', password: 'password123' }, '198.51.100.31')
    await register(h, { email: 'sec3@example.com', password: 'password123' }, '198.51.100.32')
    expect((await verifyEmail(h, await lastVerificationToken(h, 'sec2@example.com'))).status).toBe(200)
    const [other] = await h.db.select().from(users).where(eq(users.email, 'sec3@example.com'))
    expect(other.emailVerifiedAt).toBeNull()
  })

  it('10 concurrent redemptions of one token: exactly one 200', async () => {
    await register(h, { email: 'race@example.com', password: 'password123' }, '198.51.100.33')
    const token = await lastVerificationToken(h, 'race@example.com')
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => verifyEmail(h, token, `198.51.102.${i}`)))
    expect(results.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(400)])
  })

  it('the raw token is never stored', async () => {
    await register(h, { email: 'hash@example.com', password: 'password123' }, '198.51.100.34')
    const token = await lastVerificationToken(h, 'hash@example.com')
    const rows = await h.db.select().from(emailVerifications)
    expect(JSON.stringify(rows)).not.toContain(token)
  })

  it.each([
    ['wallet', '0x1111111111111111111111111111111111111111@wallet.localhost'],
    ['wallet, any case', '0xABCDEF1111111111111111111111111111111111@WALLET.LocalHost'],
    ['farcaster', '1234@farcaster.localhost'],
  ])('password sign-up with a derived %s address is 400 RESERVED_EMAIL_DOMAIN, no user', async (_, email) => {
    const res = await register(h, { email, password: 'password123' }, '198.51.100.35')
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({ error: 'This address is reserved for wallet and Farcaster sign-in', code: 'RESERVED_EMAIL_DOMAIN' })
    expect(await h.db.select().from(users).where(eq(users.email, email.toLowerCase()))).toEqual([])
  })

  it('a look-alike domain is not reserved', async () => {
    const res = await register(h, { email: 'me@wallet.localhost.example.com', password: 'password123' }, '198.51.100.36')
    expect(res.status).toBe(201)
  })
})
