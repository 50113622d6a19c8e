import { eq } from 'drizzle-orm'
import { beforeAll, describe, expect, it, vi } from 'vitest'
import { verifySecret } from '../../../lib/auth/password'
import { hashSessionToken, newSessionToken, SESSION_COOKIE } from '../../../lib/auth/session'
import { sha256Hex } from '../../../lib/crypto'
import { withUser } from '../../../lib/db/rls'
import { mailOutbox, passwordResets, sessions, users } from '../../../schema'
import { BROWSER, PASSWORD, useHarness } from '../../support/harness'
import { extraSession, forgot, freshIp, freshUser, freshWindow, getUser, lastResetMail, queueIdle, requestReset, reset, send, sessionsOf } from './helpers'
import { FORBIDDEN_ORIGIN } from '../../support/requests'

const h = useHarness()
beforeAll(async () => {
  vi.spyOn(console, 'info').mockImplementation(() => {}) // the dev outbox logs each mail
})

const FOREIGN = { ...BROWSER, origin: 'https://evil.example' }
const invalid = { error: 'Invalid or expired reset token', code: 'INVALID_RESET_TOKEN' }

describe('users security: profile routes need a session', () => {
  const calls = (cookie?: string) => [
    () => h.web.request('/api/user', cookie ? { headers: { cookie } } : {}),
    () => send(h, 'POST', '/api/user', { name: 'Mallory' }, { cookie }),
    () => send(h, 'PATCH', '/api/user', { name: 'Mallory' }, { cookie }),
    () => send(h, 'POST', '/api/user/password', { currentPassword: PASSWORD, newPassword: 'taken over!' }, { cookie }),
  ]

  it('unknown, expired or hash-as-token cookies: 401', async () => {
    const expired = newSessionToken()
    await h.db.insert(sessions).values({
      tokenHash: await hashSessionToken(expired),
      userId: h.users.alice.id,
      expiresAt: new Date(Date.now() - 1000),
    })
    const forged = [newSessionToken(), expired, await hashSessionToken(h.users.alice.token), 'a'.repeat(300)]
    for (const token of forged) {
      for (const call of calls(`${SESSION_COOKIE}=${token}`)) {
        const res = await call()
        expect(res.status).toBe(401)
      }
    }
    const [row] = await h.db.select().from(users).where(eq(users.id, h.users.alice.id))
    expect(row.name).toBe('Alice')
  })

  it('an invalid body without a session is 401, not 400 (nothing is validated for strangers)', async () => {
    const res = await send(h, 'POST', '/api/user', { name: '' })
    expect(res.status).toBe(401)
  })
})

describe('users security: cross-site requests', () => {
  it.each(['POST', 'PATCH'])('%s /api/user from a foreign Origin: 403 ORIGIN_NOT_ALLOWED, name unchanged', async (method) => {
    const res = await send(h, method, '/api/user', { name: 'Pwned' }, { cookie: h.users.alice.cookie, headers: FOREIGN })
    expect(res.status).toBe(403)
    expect(await res.json()).toEqual(FORBIDDEN_ORIGIN)
    const [row] = await h.db.select().from(users).where(eq(users.id, h.users.alice.id))
    expect(row.name).toBe('Alice')
  })

  it('POST /api/user/password from a foreign Origin: 403, password and sessions unchanged', async () => {
    const carol = await freshUser(h)
    await extraSession(h, carol.id)
    const res = await send(h, 'POST', '/api/user/password', { currentPassword: PASSWORD, newPassword: 'attacker chose' }, { cookie: carol.cookie, headers: FOREIGN })
    expect(res.status).toBe(403)
    const [row] = await h.db.select().from(users).where(eq(users.id, carol.id))
    expect(await verifySecret(PASSWORD, row.passwordHash!)).toBe(true)
    expect(await sessionsOf(h, carol.id)).toHaveLength(2)
  })
})

describe('users security: each user edits only their own row', () => {
  it("bob renaming himself changes bob's row only", async () => {
    const res = await send(h, 'PATCH', '/api/user', { name: 'Robert' }, { cookie: h.users.bob.cookie })
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ id: h.users.bob.id, name: 'Robert' })
    const rows = await h.db.select({ id: users.id, name: users.name }).from(users)
    expect(rows.find((r) => r.id === h.users.alice.id)?.name).toBe('Alice')
    expect(rows.find((r) => r.id === h.users.admin.id)?.name).toBe('Admin')
  })

  it("even a query aimed at alice's row, run as bob, changes nothing (row-level security)", async () => {
    const { alice, bob } = h.users
    const hit = await withUser(h.db, bob.id, (tx) => tx.update(users).set({ name: 'x' }).where(eq(users.id, alice.id)).returning())
    expect(hit).toEqual([])
    const [row] = await h.db.select().from(users).where(eq(users.id, alice.id))
    expect(row.name).toBe('Alice')
  })

  it('only name is editable: email, credits, plan, admin and ids in the body are ignored', async () => {
    const carol = await freshUser(h)
    const res = await send(
      h,
      'POST',
      '/api/user',
      { name: 'Carol', id: h.users.alice.id, email: 'admin@example.com', credits: 1e6, plan: 'network', subscriptionStatus: 'active', isAdmin: true, passwordHash: 'x' },
      { cookie: carol.cookie },
    )
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ id: carol.id, email: carol.email, credits: 0, plan: 'solo', subscriptionStatus: 'inactive', isAdmin: false })
    const [row] = await h.db.select().from(users).where(eq(users.id, carol.id))
    expect(row).toMatchObject({ email: carol.email, credits: 0, plan: null, subscriptionStatus: 'inactive' })
    expect(await verifySecret(PASSWORD, row.passwordHash!)).toBe(true)
  })

  it('GET /api/user never shows the password hash or billing ids', async () => {
    const text = await (await getUser(h, h.users.alice.cookie)).text()
    for (const secret of ['passwordHash', 'password_hash', '$2', 'subscriptionId', 'emailVerifiedAt']) expect(text).not.toContain(secret)
  })
})

describe('users security: forgot-password reveals no account', () => {
  it('known and unknown emails get the same status, body and headers', async () => {
    const carol = await freshUser(h)
    const outbox = async () => (await h.db.select().from(mailOutbox)).length
    const before = await outbox()
    const known = await forgot(h, carol.email)
    const unknown = await forgot(h, `nobody-${crypto.randomUUID()}@example.com`)
    expect(unknown.status).toBe(known.status)
    expect(await unknown.json()).toEqual(await known.json())
    const names = (r: Response) => [...r.headers.keys()].filter((k) => k !== 'x-request-id').sort()
    expect(names(unknown)).toEqual(names(known))
    await queueIdle(h) // the mail is sent by the queued job, after the answer
    expect(await outbox()).toBe(before + 1)
  })

  it('the link is built from APP_ORIGIN, never from the request host', async () => {
    const carol = await freshUser(h)
    const res = await h.web.request('http://evil.example/api/auth/forgot-password', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...BROWSER, 'cf-connecting-ip': freshIp(), 'x-forwarded-host': 'evil.example' },
      body: JSON.stringify({ email: carol.email }),
    })
    expect(res.status).toBe(200)
    const { mail } = await lastResetMail(h, carol.email)
    expect(mail.text).toMatch(/http:\/\/localhost:3000\/reset-password\?token=[0-9a-f]{64}/)
    expect(mail.text).not.toContain('evil.example')
  })

  it('the database holds only the token hash', async () => {
    const carol = await freshUser(h)
    const token = await requestReset(h, carol.email)
    const rows = await h.db.select().from(passwordResets).where(eq(passwordResets.userId, carol.id))
    expect(JSON.stringify(rows)).not.toContain(token)
    expect(rows.map((r) => r.tokenHash)).toEqual([await sha256Hex(token)])
  })

  it('reset tokens and the outbox are invisible to signed-in users', async () => {
    const carol = await freshUser(h)
    await requestReset(h, carol.email)
    // app_user holds no privilege on either table: even the owner of a token cannot read it
    const app = h.services.db
    await expect(withUser(app, h.users.bob.id, (tx) => tx.select().from(passwordResets).where(eq(passwordResets.userId, carol.id)))).rejects.toMatchObject({ cause: { code: '42501' } })
    await expect(withUser(app, carol.id, (tx) => tx.select().from(passwordResets))).rejects.toMatchObject({ cause: { code: '42501' } })
    await expect(withUser(app, carol.id, (tx) => tx.select().from(mailOutbox))).rejects.toMatchObject({ cause: { code: '42501' } })
  })
})

describe('users security: reset tokens are single use', () => {
  it('10 concurrent resets with one token: exactly one succeeds, and its password is the one set', async () => {
    const carol = await freshUser(h)
    const token = await requestReset(h, carol.email)
    const passwords = Array.from({ length: 10 }, (_, i) => `concurrent password ${i}`)
    const results = await Promise.all(passwords.map((p) => reset(h, token, p)))
    const statuses = results.map((r) => r.status)
    expect(statuses.filter((s) => s === 200)).toHaveLength(1)
    expect(statuses.filter((s) => s === 400)).toHaveLength(9)
    for (const r of results.filter((r) => r.status === 400)) expect(await r.json()).toEqual(invalid)
    const winner = passwords[statuses.indexOf(200)]
    const [row] = await h.db.select().from(users).where(eq(users.id, carol.id))
    expect(await verifySecret(winner, row.passwordHash!)).toBe(true)
  })

  it("a successful reset voids the user's other unused links", async () => {
    const carol = await freshUser(h)
    const first = await requestReset(h, carol.email)
    const second = await requestReset(h, carol.email)
    expect(first).not.toBe(second)
    expect((await reset(h, second, 'from the second link')).status).toBe(200)
    const res = await reset(h, first, 'from the first link')
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual(invalid)
  })

  it('changing the password voids unused reset links', async () => {
    const carol = await freshUser(h)
    const token = await requestReset(h, carol.email)
    const changed = await send(h, 'POST', '/api/user/password', { currentPassword: PASSWORD, newPassword: 'changed while signed in' }, { cookie: carol.cookie })
    expect(changed.status).toBe(200)
    expect((await reset(h, token, 'someone with the old mail')).status).toBe(400)
  })

  it('a reset signs nobody in: no Set-Cookie', async () => {
    const carol = await freshUser(h)
    const token = await requestReset(h, carol.email)
    const res = await reset(h, token, 'a fresh password')
    expect(res.status).toBe(200)
    expect(res.headers.get('set-cookie')).toBeNull()
  })
})

describe('users security: rate limits', () => {
  const headersOf = (res: Response) => ({
    limit: res.headers.get('ratelimit-limit'),
    remaining: res.headers.get('ratelimit-remaining'),
    reset: res.headers.get('ratelimit-reset'),
  })

  it('forgot-password: 5 per IP, then 429 with RateLimit-* and Retry-After; other IPs unaffected', async () => {
    await freshWindow(15 * 60, 10_000)
    const ip = freshIp()
    for (let i = 0; i < 5; i++) {
      const res = await forgot(h, 'nobody@example.com', ip)
      expect(res.status).toBe(200)
      expect(headersOf(res)).toMatchObject({ limit: '5', remaining: String(4 - i) })
      expect(Number(res.headers.get('ratelimit-reset'))).toBeGreaterThan(0)
    }
    const res = await forgot(h, 'nobody@example.com', ip)
    expect(res.status).toBe(429)
    expect(await res.json()).toEqual({ error: 'Too many requests', code: 'RATE_LIMITED' })
    expect(headersOf(res)).toMatchObject({ limit: '5', remaining: '0' })
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect([...res.headers.keys()].filter((k) => k.startsWith('x-ratelimit'))).toEqual([])
    expect((await forgot(h, 'nobody@example.com', freshIp())).status).toBe(200)
  })

  it('reset-password: shares the budget; a limited request does not use up a valid token', async () => {
    await freshWindow(15 * 60, 10_000)
    const carol = await freshUser(h)
    const token = await requestReset(h, carol.email)
    const ip = freshIp()
    for (let i = 0; i < 3; i++) expect((await forgot(h, 'nobody@example.com', ip)).status).toBe(200)
    for (let i = 0; i < 2; i++) expect((await reset(h, 'f'.repeat(64), 'some password', ip)).status).toBe(400)
    const limited = await reset(h, token, 'blocked password', ip)
    expect(limited.status).toBe(429)
    expect(headersOf(limited)).toMatchObject({ limit: '5', remaining: '0' })
    expect(limited.headers.get('retry-after')).toBeTruthy()
    expect((await reset(h, token, 'allowed password', freshIp())).status).toBe(200)
  })

  it('change password: 5 attempts per user per 15 minutes, whatever the IP', async () => {
    await freshWindow(15 * 60, 10_000)
    const carol = await freshUser(h)
    for (let i = 0; i < 5; i++) {
      const res = await send(h, 'POST', '/api/user/password', { currentPassword: `guess ${i}`, newPassword: 'whatever new' }, { cookie: carol.cookie })
      expect(res.status).toBe(400)
      expect(res.headers.get('ratelimit-limit')).toBe('5')
    }
    const res = await send(h, 'POST', '/api/user/password', { currentPassword: PASSWORD, newPassword: 'whatever new' }, { cookie: carol.cookie })
    expect(res.status).toBe(429)
    const [row] = await h.db.select().from(users).where(eq(users.id, carol.id))
    expect(await verifySecret(PASSWORD, row.passwordHash!)).toBe(true)
    // Another user is not affected.
    const dan = await freshUser(h, 'Dan')
    expect((await send(h, 'POST', '/api/user/password', { currentPassword: PASSWORD, newPassword: 'dan new one' }, { cookie: dan.cookie })).status).toBe(200)
  })
})
