import { eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { issueCsrfToken } from '../../../lib/auth/csrf'
import { hashSessionToken } from '../../../lib/auth/session'
import { hmacSha256Hex } from '../../../lib/crypto'
import { sessions } from '../../../schema'
import { BROWSER, createHarness, PASSWORD, useHarness } from '../../support/harness'
import { startTurnstileServer } from '../../support/turnstile-server'
import { json, login, register, sessionCookie } from './flow'

const h = useHarness()

const loginWith = (headers: Record<string, string>, ip: string) =>
  h.web.request('/api/auth/login', json({ email: h.users.alice.email, password: PASSWORD }, { ...headers, 'cf-connecting-ip': ip }))

describe('login: CSRF', () => {
  it('refuses a missing token', async () => {
    const res = await loginWith({}, '10.9.0.1')
    expect(res.status).toBe(403)
    expect(await res.json()).toEqual({ error: 'Invalid or missing CSRF token', code: 'CSRF_INVALID' })
  })

  it('refuses forged, foreign-secret, tampered, malformed and stale tokens', async () => {
    const good = await issueCsrfToken('test-session-secret')
    const foreign = await issueCsrfToken('another-secret')
    const stale = await issueCsrfToken('test-session-secret', Date.now() - 3 * 60 * 60 * 1000)
    const future = await issueCsrfToken('test-session-secret', Date.now() + 60 * 60 * 1000)
    const tamperedToken = `${good.token.replace(/^./, (ch) => (ch === 'a' ? 'b' : 'a'))}:${good.signed}`
    const forged = [
      `${good.token}:${'0'.repeat(64)}`,
      foreign.header,
      tamperedToken,
      good.token,
      good.signed,
      `${good.header}x`,
      stale.header,
      future.header,
      `abc.${Math.floor(Date.now() / 1000)}:${await hmacSha256Hex('wrong', 'abc')}`,
    ]
    for (const [i, header] of forged.entries()) {
      const res = await loginWith({ 'x-csrf-token': header }, `10.9.1.${i}`)
      expect(res.status, header).toBe(403)
    }
    // the genuine token still works
    expect((await loginWith({ 'x-csrf-token': good.header }, '10.9.2.1')).status).toBe(200)
  })
})

describe('sessions', () => {
  it('a stolen session row hash cannot be used as a cookie', async () => {
    const [row] = await h.db.select().from(sessions).where(eq(sessions.userId, h.users.alice.id))
    const res = await h.web.request('/api/auth/session', { headers: { cookie: `service-session=${row.tokenHash}` } })
    expect(await res.json()).toEqual({ user: null, expires: null })
    expect((await h.web.request('/api/trial', { headers: { cookie: `service-session=${row.tokenHash}` } })).status).toBe(401)
  })

  it('refuses an expired session and removes its row', async () => {
    const cookie = sessionCookie(await login(h, h.users.bob.email, PASSWORD, '10.9.3.1'))
    const tokenHash = await hashSessionToken(cookie.split('=')[1])
    expect(await h.db.select().from(sessions).where(eq(sessions.tokenHash, tokenHash))).toHaveLength(1)
    await h.db.update(sessions).set({ expiresAt: new Date(Date.now() - 1000) }).where(eq(sessions.userId, h.users.bob.id))
    expect(await (await h.web.request('/api/auth/session', { headers: { cookie } })).json()).toEqual({ user: null, expires: null })
    expect((await h.web.request('/api/trial', { headers: { cookie } })).status).toBe(401)
    const left = await h.db.select().from(sessions).where(eq(sessions.tokenHash, tokenHash))
    expect(left).toEqual([])
  })

  it('does not reuse a cookie planted before sign-in (no fixation)', async () => {
    const planted = 'a'.repeat(64)
    const res = await h.web.request(
      '/api/auth/login',
      json({ email: h.users.alice.email, password: PASSWORD }, {
        'x-csrf-token': ((await (await h.web.request('/api/auth/csrf')).json()) as { header: string }).header,
        cookie: `service-session=${planted}`,
        'cf-connecting-ip': '10.9.4.1',
      }),
    )
    expect(sessionCookie(res)).not.toBe(`service-session=${planted}`)
  })

  it('sign-out with a session cookie from a foreign Origin is refused and the session survives', async () => {
    const cookie = sessionCookie(await login(h, h.users.alice.email, PASSWORD, '10.9.5.1'))
    const res = await h.web.request('/api/auth/signout', { method: 'POST', headers: { cookie, origin: 'https://evil.example' } })
    expect(res.status).toBe(403)
    expect((await (await h.web.request('/api/auth/session', { headers: { cookie } })).json()).user).not.toBeNull()
  })

  it('garbage and oversize cookies read as no session', async () => {
    for (const value of ['', 'x', 'a'.repeat(300), "' or 1=1 --"]) {
      const res = await h.web.request('/api/auth/session', { headers: { cookie: `service-session=${encodeURIComponent(value)}` } })
      expect((await res.json()).user).toBeNull()
    }
  })
})

describe('register: bot detection and secrets', () => {
  it('refuses empty and scripted user agents with 403, before validating the body', async () => {
    for (const ua of ['', 'curl/8.5.0', 'python-requests/2.31', 'Go-http-client/1.1', 'Wget/1.21', 'Googlebot/2.1']) {
      const res = await h.web.request('/api/register', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': ua, 'cf-connecting-ip': '10.9.6.1' },
        body: JSON.stringify({ email: 'bot@example.com' }),
      })
      expect(res.status, ua).toBe(403)
      expect(await res.json()).toEqual({ error: 'Bot detected', code: 'BOT_DETECTED', hint: expect.stringContaining('User-Agent') })
    }
  })

  it('requires a valid Turnstile token when TURNSTILE_SECRET_KEY is set', async () => {
    const turnstile = await startTurnstileServer({ secret: 'ts-secret', validTokens: ['good-token'] })
    const t = await createHarness({ env: { TURNSTILE_SECRET_KEY: 'ts-secret', TURNSTILE_VERIFY_URL: turnstile.url } })
    try {
      const body = { email: 'human@example.com', password: 'password123' }
      expect((await register(t, body, '10.9.7.1')).status).toBe(403)
      expect((await register(t, { ...body, 'cf-turnstile-response': 'bad-token' }, '10.9.7.2')).status).toBe(403)
      const ok = await register(t, { ...body, 'cf-turnstile-response': 'good-token' }, '10.9.7.3')
      expect(ok.status).toBe(201)
      const viaHeader = await t.web.request(
        '/api/register',
        json({ email: 'human2@example.com', password: 'password123' }, { 'cf-turnstile-response': 'good-token', 'cf-connecting-ip': '10.9.7.4' }),
      )
      expect(viaHeader.status).toBe(201)
      expect(turnstile.received.at(-1)).toMatchObject({ secret: 'ts-secret', response: 'good-token' })
    } finally {
      await t.close()
      await turnstile.close()
    }
  })

  it('never returns the password hash', async () => {
    const res = await register(h, { email: 'secretive@example.com', password: 'password123' }, '10.9.8.1')
    const text = await res.text()
    expect(text).not.toContain('$2')
    expect(text).not.toContain('password')
  })
})

describe('trial: isolation', () => {
  it("reads only the caller's own trial", async () => {
    const a = await (await h.web.request('/api/trial', { headers: { cookie: h.users.alice.cookie } })).json()
    // seeded users have no trial; a fresh sign-up does
    expect(a).toEqual({ active: false, startedAt: null, endsAt: null, daysRemaining: 0 })
    expect(BROWSER.origin).toBe('http://localhost:3000')
  })
})
