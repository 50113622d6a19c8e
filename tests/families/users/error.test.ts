import { eq, sql } from 'drizzle-orm'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { app as usersApp } from '../../../functions/users/app'
import { createPlatformApp } from '../../../lib/app'
import { verifySecret } from '../../../lib/auth/password'
import { randomHex, sha256Hex } from '../../../lib/crypto'
import { MailProviderError } from '../../../lib/mail/resend'
import { passwordResets, users } from '../../../schema'
import { BROWSER, PASSWORD, useHarness } from '../../support/harness'
import { extraSession, forgot, freshIp, freshUser, getUser, lastResetMail, requestReset, reset, send, sessionsOf } from './helpers'

const h = useHarness()
afterEach(() => {
  vi.restoreAllMocks()
})

const quietOutbox = () => vi.spyOn(console, 'info').mockImplementation(() => {})

/** 400 `{error, code: 'VALIDATION', issues}` whose first issue is `message` on `path`. */
async function expectValidation(res: Response, message: string, path: string) {
  expect(res.status).toBe(400)
  const body = await res.json()
  expect(body).toMatchObject({ error: message, code: 'VALIDATION' })
  expect(body.issues[0]).toEqual({ path, message })
}

describe('users: profile validation', () => {
  it.each([
    ['missing name', {}, 'Name is required'],
    ['empty name', { name: '' }, 'Name is required'],
    ['blank name', { name: '   \t ' }, 'Name is required'],
    ['null name', { name: null }, 'Name is required'],
    ['numeric name', { name: 42 }, 'Name is required'],
    ['101 characters', { name: 'x'.repeat(101) }, 'Name must be at most 100 characters'],
  ])('%s: 400 VALIDATION "%s"', async (_, body, message) => {
    for (const method of ['POST', 'PATCH']) {
      await expectValidation(await send(h, method, '/api/user', body, { cookie: h.users.bob.cookie }), message, 'name')
    }
    const [row] = await h.db.select().from(users).where(eq(users.id, h.users.bob.id))
    expect(row.name).toBe('Bob')
  })

  it('malformed JSON: 400 {error: "Invalid JSON body"}', async () => {
    const res = await send(h, 'POST', '/api/user', '{"name":', { cookie: h.users.bob.cookie })
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({ error: 'Invalid JSON body', code: 'INVALID_JSON' })
  })

  it('an exact validation body', async () => {
    const res = await send(h, 'PATCH', '/api/user', { name: '' }, { cookie: h.users.bob.cookie })
    expect(await res.json()).toEqual({ error: 'Name is required', code: 'VALIDATION', issues: [{ path: 'name', message: 'Name is required' }] })
  })
})

describe('users: change password errors', () => {
  const change = (cookie: string, body: unknown) => send(h, 'POST', '/api/user/password', body, { cookie })

  it('a wrong current password: 400 "Current password is incorrect"; nothing changes', async () => {
    const carol = await freshUser(h)
    const other = await extraSession(h, carol.id)
    const [before] = await h.db.select().from(users).where(eq(users.id, carol.id))
    const res = await change(carol.cookie, { currentPassword: 'not my password', newPassword: 'whatever new one' })
    expect(res.status).toBe(400) // not 401: the dashboard would take that for a lost session
    expect(await res.json()).toEqual({ error: 'Current password is incorrect', code: 'CURRENT_PASSWORD_INCORRECT' })
    const [after] = await h.db.select().from(users).where(eq(users.id, carol.id))
    expect(after.passwordHash).toBe(before.passwordHash)
    expect(await verifySecret(PASSWORD, after.passwordHash!)).toBe(true)
    expect(await sessionsOf(h, carol.id)).toHaveLength(2)
    expect((await getUser(h, other.cookie)).status).toBe(200)
  })

  it('an account without a password answers like a wrong one', async () => {
    const carol = await freshUser(h)
    await h.db.update(users).set({ passwordHash: null }).where(eq(users.id, carol.id))
    const res = await change(carol.cookie, { currentPassword: 'anything at all', newPassword: 'whatever new one' })
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({ error: 'Current password is incorrect', code: 'CURRENT_PASSWORD_INCORRECT' })
    const [row] = await h.db.select().from(users).where(eq(users.id, carol.id))
    expect(row.passwordHash).toBeNull()
  })

  it.each([
    ['missing current password', { newPassword: 'long enough' }, 'Current password is required', 'currentPassword'],
    ['empty current password', { currentPassword: '', newPassword: 'long enough' }, 'Current password is required', 'currentPassword'],
    ['missing new password', { currentPassword: PASSWORD }, 'New password is required', 'newPassword'],
    ['7-character new password', { currentPassword: PASSWORD, newPassword: '1234567' }, 'New password must be at least 8 characters', 'newPassword'],
    ['257-character new password', { currentPassword: PASSWORD, newPassword: 'p'.repeat(257) }, 'New password must be at most 256 characters', 'newPassword'],
  ])('%s: 400 VALIDATION', async (_, body, message, path) => {
    const carol = await freshUser(h)
    await expectValidation(await change(carol.cookie, body), message, path)
  })
})

describe('users: forgot-password errors', () => {
  it.each([
    ['missing email', {}, 'Email is required'],
    ['empty email', { email: '  ' }, 'Email is required'],
    ['not an email', { email: 'not-an-email' }, 'Invalid email'],
    ['a number', { email: 12 }, 'Email is required'],
  ])('%s: 400 VALIDATION', async (_, body, message) => {
    await expectValidation(await send(h, 'POST', '/api/auth/forgot-password', body), message, 'email')
  })

  it('the provider failing: still 200 {ok: true}; logged without the link; the queue retries with a new token', async () => {
    const carol = await freshUser(h)
    const send = vi.spyOn(h.services.mail, 'send').mockRejectedValueOnce(new MailProviderError(503, 'Resend refused password-reset mail (503)'))
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {})
    vi.spyOn(console, 'warn').mockImplementation(() => {})
    const res = await forgot(h, carol.email)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ ok: true })
    const { token } = await lastResetMail(h, carol.email) // waits for the retry (1 s backoff)
    expect(send).toHaveBeenCalledTimes(2)
    const failedText = (send.mock.calls[0] as unknown as [{ text: string }])[0].text
    const failedToken = /token=([0-9a-f]{64})/.exec(failedText)![1]
    expect(failedToken).not.toBe(token)
    const line = logged.mock.calls.map((c) => c.join(' ')).join('\n')
    expect(JSON.parse(line)).toMatchObject({ event: 'mail.password_reset_failed', errorMessage: 'Resend refused password-reset mail (503)' })
    expect(line).not.toContain(failedToken)
    // The unsent token was removed: only the mailed one is stored, and only it works.
    const rows = await h.db.select().from(passwordResets).where(eq(passwordResets.userId, carol.id))
    expect(rows.map((r) => r.tokenHash)).toEqual([await sha256Hex(token)])
    expect((await reset(h, failedToken, 'new password 1')).status).toBe(400)
  })
})

describe('users: reset-password errors', () => {
  const invalid = { error: 'Invalid or expired reset token', code: 'INVALID_RESET_TOKEN' }

  it('an unknown token: 400 "Invalid or expired reset token"', async () => {
    const res = await reset(h, randomHex(32), 'new password here')
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual(invalid)
  })

  it.each(['not-a-token', 'z'.repeat(64), 'a'.repeat(63), 'a'.repeat(65), 'a'.repeat(5000)])('a malformed token (%s): the same 400', async (token) => {
    const res = await reset(h, token, 'new password here')
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual(invalid)
  })

  it('an expired token: 400; the password and sessions stay', async () => {
    const carol = await freshUser(h)
    const token = randomHex(32)
    await h.db.insert(passwordResets).values({ tokenHash: await sha256Hex(token), userId: carol.id, expiresAt: sql`now() - interval '1 second'` })
    const [before] = await h.db.select().from(users).where(eq(users.id, carol.id))
    const res = await reset(h, token, 'new password here')
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual(invalid)
    const [after] = await h.db.select().from(users).where(eq(users.id, carol.id))
    expect(after.passwordHash).toBe(before.passwordHash)
    expect(await sessionsOf(h, carol.id)).toHaveLength(1)
    const [row] = await h.db.select().from(passwordResets).where(eq(passwordResets.tokenHash, await sha256Hex(token)))
    expect(row.usedAt).toBeNull()
  })

  it('a used token: 400 on the second use; the first password stays', async () => {
    quietOutbox()
    const carol = await freshUser(h)
    const token = await requestReset(h, carol.email)
    expect((await reset(h, token, 'first new password')).status).toBe(200)
    const res = await reset(h, token, 'second new password')
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual(invalid)
    const [row] = await h.db.select().from(users).where(eq(users.id, carol.id))
    expect(await verifySecret('first new password', row.passwordHash!)).toBe(true)
  })

  it.each([
    ['missing token', { password: 'long enough' }, 'Token is required', 'token'],
    ['empty token', { token: '', password: 'long enough' }, 'Token is required', 'token'],
    ['missing password', { token: 'a'.repeat(64) }, 'Password is required', 'password'],
    ['7-character password', { token: 'a'.repeat(64), password: '1234567' }, 'Password must be at least 8 characters', 'password'],
    ['257-character password', { token: 'a'.repeat(64), password: 'p'.repeat(257) }, 'Password must be at most 256 characters', 'password'],
  ])('%s: 400 VALIDATION', async (_, body, message, path) => {
    await expectValidation(await send(h, 'POST', '/api/auth/reset-password', body), message, path)
  })

  it('a short password does not use up a valid token', async () => {
    quietOutbox()
    const carol = await freshUser(h)
    const token = await requestReset(h, carol.email)
    await expectValidation(await reset(h, token, 'short'), 'Password must be at least 8 characters', 'password')
    expect((await reset(h, token, 'long enough now')).status).toBe(200)
  })

  it('forgot-password for an unknown email then reset with a made-up token: 400', async () => {
    expect((await forgot(h, 'ghost@example.com')).status).toBe(200)
    const res = await reset(h, randomHex(32), 'new password here')
    expect(res.status).toBe(400)
  })
})
