import { eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { app as auth } from '../../../functions/auth/app'
import { createPlatformApp } from '../../../lib/app'
import { users } from '../../../schema'
import { PASSWORD, useHarness } from '../../support/harness'
import { csrfHeader, json, login, register } from './flow'

const h = useHarness()

describe('register: errors', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['missing email', { password: 'password123' }, 'Email is required'],
    ['empty email', { email: '', password: 'password123' }, 'Email is required'],
    ['invalid email', { email: 'not-an-email', password: 'password123' }, 'Invalid email'],
    ['email of the wrong type', { email: 42, password: 'password123' }, 'Email is required'],
    ['short password', { email: 'short@example.com', password: 'seven77' }, 'Password must be at least 8 characters'],
    ['missing password', { email: 'nopw@example.com' }, 'Password is required'],
    ['referral code with symbols', { email: 'r1@example.com', password: 'password123', referralCode: 'AB_CD' }, 'Invalid referral code'],
    ['referral code too long', { email: 'r2@example.com', password: 'password123', referralCode: 'A'.repeat(21) }, 'Invalid referral code'],
  ]
  it.each(cases)('%s → 400', async (_, body, error) => {
    const res = await register(h, body, '198.51.100.20')
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ error, code: 'VALIDATION' })
  })

  it('an unknown referral code is 400 and creates no user', async () => {
    const res = await register(h, { email: 'ghost@example.com', password: 'password123', referralCode: 'NOPE-123' }, '198.51.100.21')
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({ error: 'Invalid referral code', code: 'INVALID_REFERRAL' })
    expect(await h.db.select().from(users).where(eq(users.email, 'ghost@example.com'))).toEqual([])
  })

  it('an existing email, in any case, is 409', async () => {
    const res = await register(h, { email: h.users.alice.email.toUpperCase(), password: 'password123' }, '198.51.100.22')
    expect(res.status).toBe(409)
    expect(await res.json()).toEqual({ error: 'User already exists', code: 'USER_EXISTS' })
  })

  it('concurrent sign-ups with one email: exactly one account', async () => {
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => register(h, { email: 'race@example.com', password: 'password123' }, `198.51.100.${100 + i}`)),
    )
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409])
    expect(await h.db.select().from(users).where(eq(users.email, 'race@example.com'))).toHaveLength(1)
  })

  it('malformed JSON is 400 Invalid JSON body', async () => {
    const res = await h.web.request('/api/register', { ...json({}), body: '{"email":' })
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({ error: 'Invalid JSON body', code: 'INVALID_JSON' })
  })

  it('is limited per IP with the RateLimit headers', async () => {
    const ip = '198.51.100.200'
    const statuses: number[] = []
    for (let i = 0; i < 11; i++) statuses.push((await register(h, { email: `limit${i}@example.com`, password: 'x' }, ip)).status)
    expect(statuses.slice(0, 10).every((s) => s === 400)).toBe(true)
    const res = await register(h, { email: 'limit-last@example.com', password: 'password123' }, ip)
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/)
    expect(res.headers.get('ratelimit-limit')).toBe('10')
    expect(res.headers.get('ratelimit-remaining')).toBe('0')
  })
})

describe('login: errors', () => {
  it('missing email or password is 400', async () => {
    for (const body of [{ email: h.users.alice.email }, { password: PASSWORD }, {}]) {
      const res = await h.web.request('/api/auth/login', json(body, { 'x-csrf-token': await csrfHeader(h), 'cf-connecting-ip': '192.0.2.1' }))
      expect(res.status).toBe(400)
      expect((await res.json()).error).toBe('Email and password are required')
    }
  })

  it('a wrong password and an unknown email get the same 401', async () => {
    const wrong = await login(h, h.users.alice.email, 'not the password', '192.0.2.2')
    const unknown = await login(h, 'nobody@example.com', PASSWORD, '192.0.2.3')
    expect(wrong.status).toBe(401)
    expect(unknown.status).toBe(401)
    expect(await wrong.json()).toEqual({ error: 'Invalid credentials', code: 'INVALID_CREDENTIALS' })
    expect(await unknown.json()).toEqual({ error: 'Invalid credentials', code: 'INVALID_CREDENTIALS' })
    expect(wrong.headers.get('set-cookie')).toBeNull()
  })

  it('the 6th attempt in 15 minutes from one IP is 429, even with the right password', async () => {
    const ip = '192.0.2.10'
    for (let i = 0; i < 5; i++) expect((await login(h, h.users.alice.email, 'wrong', ip)).status).toBe(401)
    const res = await login(h, h.users.alice.email, PASSWORD, ip)
    expect(res.status).toBe(429)
    const reset = Number(res.headers.get('ratelimit-reset'))
    expect(reset).toBeGreaterThan(0)
    expect(reset).toBeLessThanOrEqual(900)
    expect(res.headers.get('retry-after')).toBe(String(reset))
    // another IP is unaffected
    expect((await login(h, h.users.alice.email, PASSWORD, '192.0.2.11')).status).toBe(200)
  })

  it('holds under 100 parallel attempts: exactly 5 admitted, the rest 429 with headers', async () => {
    const header = await csrfHeader(h)
    const attempts = await Promise.all(
      Array.from({ length: 100 }, () =>
        h.web.request('/api/auth/login', json({ email: h.users.bob.email, password: PASSWORD }, { 'x-csrf-token': header, 'cf-connecting-ip': '192.0.2.99' })),
      ),
    )
    const admitted = attempts.filter((r) => r.status === 200)
    const limited = attempts.filter((r) => r.status === 429)
    expect(admitted).toHaveLength(5)
    expect(limited).toHaveLength(95)
    for (const r of limited) {
      expect(r.headers.get('ratelimit-limit')).toBe('5')
      expect(r.headers.get('ratelimit-remaining')).toBe('0')
      expect(r.headers.get('retry-after')).toMatch(/^\d+$/)
      expect([...r.headers.keys()].some((k) => k.startsWith('x-ratelimit'))).toBe(false)
    }
  })

  it('a store failure is 500 Login failed, nothing leaked', async () => {
    const broken = createPlatformApp(() =>
      Object.create(h.services, {
        db: {
          get() {
            throw new Error('connection to db.internal:5432 refused')
          },
        },
        reader: {
          get() {
            throw new Error('connection to db.internal:5432 refused')
          },
        },
      }),
    ).route('/', auth)
    const res = await broken.request('/api/auth/login', json({ email: 'x@example.com', password: 'password123' }, { 'x-csrf-token': await csrfHeader(h), 'cf-connecting-ip': '192.0.2.150' }))
    expect(res.status).toBe(500)
    expect(await res.json()).toEqual({ error: 'Login failed', code: 'INTERNAL' })
  })
})

describe('trial: errors', () => {
  it('needs a session', async () => {
    const res = await h.web.request('/api/trial')
    expect(res.status).toBe(401)
    expect(await res.json()).toEqual({ error: 'Unauthorized', code: 'UNAUTHORIZED' })
  })
})
