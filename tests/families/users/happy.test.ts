import { eq } from 'drizzle-orm'
import { beforeAll, describe, expect, it, vi } from 'vitest'
import type { LocalQueue } from '../../../infra/local-queue'
import { createNodeServices } from '../../../infra/services'
import { createPlatformApp } from '../../../lib/app'
import { verifySecret } from '../../../lib/auth/password'
import { sha256Hex } from '../../../lib/crypto'
import { cfClientIp } from '../../../lib/http/client-ip'
import { MemoryKv } from '../../../lib/kv/memory'
import { app as usersApp } from '../../../functions/users/app'
import { mailOutbox, passwordResets, users } from '../../../schema'
import { startResendServer } from '../../mail/resend-server'
import { PASSWORD, useHarness } from '../../support/harness'
import { extraSession, forgot, freshUser, getUser, lastResetMail, requestReset, reset, send, sessionsOf } from './helpers'

const h = useHarness()
beforeAll(async () => {
  vi.spyOn(console, 'info').mockImplementation(() => {}) // the dev outbox logs each mail
})

const USER_KEYS = ['createdAt', 'credits', 'email', 'emailVerified', 'id', 'isAdmin', 'name', 'plan', 'referralCode', 'subscriptionStatus']

describe('users: profile', () => {
  it('GET /api/user returns the signed-in user', async () => {
    const { alice } = h.users
    const res = await getUser(h, alice.cookie)
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(Object.keys(body).sort()).toEqual(USER_KEYS)
    expect(body).toMatchObject({ id: alice.id, email: alice.email, plan: 'solo', subscriptionStatus: 'inactive', credits: 0, isAdmin: false, emailVerified: true })
    expect(body.referralCode).toMatch(/^[A-Z0-9]{10}$/)
    expect(new Date(body.createdAt).toISOString()).toBe(body.createdAt)
  })

  it('an admin sees isAdmin: true', async () => {
    const body = await (await getUser(h, h.users.admin.cookie)).json()
    expect(body).toMatchObject({ id: h.users.admin.id, isAdmin: true })
  })

  it.each(['POST', 'PATCH'])('%s /api/user sets the trimmed name and returns the updated user', async (method) => {
    const { alice } = h.users
    const res = await send(h, method, '/api/user', { name: `  Alice ${method}  ` }, { cookie: alice.cookie })
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(Object.keys(body).sort()).toEqual(USER_KEYS)
    expect(body).toMatchObject({ id: alice.id, email: alice.email, name: `Alice ${method}`, isAdmin: false })
    expect((await (await getUser(h, alice.cookie)).json()).name).toBe(`Alice ${method}`)
    const [row] = await h.db.select().from(users).where(eq(users.id, alice.id))
    expect(row.name).toBe(`Alice ${method}`)
  })

  it('a name of exactly 100 characters (after trimming) is accepted', async () => {
    const name = 'n'.repeat(100)
    const res = await send(h, 'PATCH', '/api/user', { name: ` ${name} ` }, { cookie: h.users.alice.cookie })
    expect(res.status).toBe(200)
    expect((await res.json()).name).toBe(name)
  })
})

describe('users: change password', () => {
  it('sets the new password, ends the other sessions and keeps the current one', async () => {
    const carol = await freshUser(h)
    const other = await extraSession(h, carol.id)
    const bobSessions = await sessionsOf(h, h.users.bob.id)
    expect(await sessionsOf(h, carol.id)).toHaveLength(2)

    const res = await send(h, 'POST', '/api/user/password', { currentPassword: PASSWORD, newPassword: 'a brand new secret' }, { cookie: carol.cookie })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ ok: true })

    const [row] = await h.db.select().from(users).where(eq(users.id, carol.id))
    expect(await verifySecret('a brand new secret', row.passwordHash!)).toBe(true)
    expect(await verifySecret(PASSWORD, row.passwordHash!)).toBe(false)
    const left = await sessionsOf(h, carol.id)
    expect(left).toHaveLength(1)
    expect(left[0].tokenHash).not.toBe(other.tokenHash)
    expect((await getUser(h, carol.cookie)).status).toBe(200) // this browser stays signed in
    expect((await getUser(h, other.cookie)).status).toBe(401) // the other one is signed out
    expect(await sessionsOf(h, h.users.bob.id)).toEqual(bobSessions) // nobody else's sessions
  })

  it('the new password can be changed again with the new password as current', async () => {
    const dan = await freshUser(h, 'Dan')
    expect((await send(h, 'POST', '/api/user/password', { currentPassword: PASSWORD, newPassword: 'second password' }, { cookie: dan.cookie })).status).toBe(200)
    const res = await send(h, 'POST', '/api/user/password', { currentPassword: 'second password', newPassword: 'third password' }, { cookie: dan.cookie })
    expect(res.status).toBe(200)
    const [row] = await h.db.select().from(users).where(eq(users.id, dan.id))
    expect(await verifySecret('third password', row.passwordHash!)).toBe(true)
  })
})

describe('users: forgot and reset password', () => {
  it('forgot-password mails a reset link and stores only the SHA-256 of its token', async () => {
    const carol = await freshUser(h)
    const res = await forgot(h, `  ${carol.email.toUpperCase()} `) // matched trimmed and lower-cased
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ ok: true })

    const { mail, token } = await lastResetMail(h, carol.email)
    expect(mail).toMatchObject({ to: carol.email, kind: 'password-reset', subject: 'Reset your password' })
    expect(mail.text).toContain(`http://localhost:3000/reset-password?token=${token}`)
    const rows = await h.db.select().from(passwordResets).where(eq(passwordResets.userId, carol.id))
    expect(rows).toHaveLength(1)
    expect(rows[0].tokenHash).toBe(await sha256Hex(token))
    expect(rows[0].tokenHash).not.toBe(token)
    expect(rows[0].usedAt).toBeNull()
    const ttl = rows[0].expiresAt.getTime() - Date.now()
    expect(ttl).toBeGreaterThan(59 * 60_000)
    expect(ttl).toBeLessThanOrEqual(60 * 60_000 + 5_000)
  })

  it('an unknown email gets the same 200 {ok: true} and no mail', async () => {
    const before = (await h.db.select().from(mailOutbox)).length
    const res = await forgot(h, 'nobody-here@example.com')
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ ok: true })
    expect(await h.db.select().from(mailOutbox)).toHaveLength(before)
  })

  it('reset-password sets the new password, ends every session and uses up the token', async () => {
    const carol = await freshUser(h)
    const other = await extraSession(h, carol.id)
    const token = await requestReset(h, carol.email)

    const res = await reset(h, token, 'reset to this one')
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ ok: true })

    const [row] = await h.db.select().from(users).where(eq(users.id, carol.id))
    expect(await verifySecret('reset to this one', row.passwordHash!)).toBe(true)
    expect(await sessionsOf(h, carol.id)).toEqual([])
    expect((await getUser(h, carol.cookie)).status).toBe(401)
    expect((await getUser(h, other.cookie)).status).toBe(401)
    const [used] = await h.db.select().from(passwordResets).where(eq(passwordResets.tokenHash, await sha256Hex(token)))
    expect(used.usedAt).toBeInstanceOf(Date)

    const again = await reset(h, token, 'and once more please')
    expect(again.status).toBe(400)
    expect(await again.json()).toEqual({ error: 'Invalid or expired reset token', code: 'INVALID_RESET_TOKEN' })
  })
})

describe('users: forgot-password with RESEND_API_KEY set', () => {
  it('the local server mails through the provider instead of the outbox', async () => {
    const resend = await startResendServer({ apiKey: 're_live_key' })
    const node = await createNodeServices({
      env: { APP_ORIGIN: 'https://app.example.com', RESEND_API_KEY: 're_live_key', RESEND_API_URL: resend.url, MAIL_FROM: 'Platform <no-reply@example.com>', PASSWORD_HASH_COST: '4', DATA_DIR: '.test-data' },
      database: { db: h.db, adapter: 'pglite', close: async () => {} },
      kv: new MemoryKv(),
      clientIp: cfClientIp,
    })
    try {
      const app = createPlatformApp(node.provider).route('/', usersApp)
      node.setDeliver((req) => Promise.resolve(app.fetch(req)))
      const carol = await freshUser(h)
      const outboxBefore = (await h.db.select().from(mailOutbox)).length
      const res = await app.request('/api/auth/forgot-password', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'cf-connecting-ip': '192.0.2.1' },
        body: JSON.stringify({ email: carol.email }),
      })
      expect(res.status).toBe(200)
      await (node.services.queue as LocalQueue).idle() // the job mails after the answer
      expect(resend.sent).toHaveLength(1)
      expect(resend.sent[0]).toMatchObject({ from: 'Platform <no-reply@example.com>', to: [carol.email], subject: 'Reset your password' })
      const token = /https:\/\/app\.example\.com\/reset-password\?token=([0-9a-f]{64})/.exec(resend.sent[0].text!)?.[1]
      expect(token).toBeDefined()
      const [row] = await h.db.select().from(passwordResets).where(eq(passwordResets.userId, carol.id))
      expect(row.tokenHash).toBe(await sha256Hex(token!))
      expect(await h.db.select().from(mailOutbox)).toHaveLength(outboxBefore)
    } finally {
      await node.close()
      await resend.close()
    }
  })
})

describe('users: documented', () => {
  it('every route is in the OpenAPI document', async () => {
    const doc = await (await h.web.request('/api/openapi.json')).json()
    expect(Object.keys(doc.paths['/api/user']).sort()).toEqual(['get', 'patch', 'post'])
    expect(doc.paths['/api/user'].get.responses['200'].content['application/json'].schema).toBeDefined()
    for (const p of ['/api/user/password', '/api/auth/forgot-password', '/api/auth/reset-password']) expect(doc.paths[p].post).toBeDefined()
  })
})
