import { eq, inArray } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { invites, users } from '../../../schema'
import { useHarness } from '../../support/harness'
import { call } from '../../support/requests'
import { createInvite, insertInvite, newCode, verify } from '../invites/helpers'
import { register } from './flow'

const h = useHarness()

// A fresh client IP per sign-up, so the register limiter (10 per hour per IP) never interferes.
let nextIp = 0
const ip = () => `198.18.${Math.floor(++nextIp / 250)}.${(nextIp % 250) + 1}`
const signUp = (body: Record<string, unknown>) => register(h, { password: 'password123', ...body }, ip())
const userByEmail = (email: string) => h.db.select().from(users).where(eq(users.email, email))
const inviteByCode = async (code: string) => (await h.db.select().from(invites).where(eq(invites.code, code)))[0]

describe('sign-up with an invite: happy paths', () => {
  it("redeems a user's invite: 201 as usual, the invite used by the new user, then no longer verifiable", async () => {
    const { token } = await createInvite(h, h.users.alice, 'Guest One')
    const res = await signUp({ email: 'guest.one@example.com', token })
    expect(res.status).toBe(201)
    const created = await res.json()
    expect(created).toEqual({ id: expect.any(String), email: 'guest.one@example.com', name: 'guest.one@example.com' })
    const row = await inviteByCode(token)
    expect(row.usedBy).toBe(created.id)
    expect(row.usedAt).toBeInstanceOf(Date)
    expect(Math.abs(row.usedAt!.getTime() - Date.now())).toBeLessThan(60_000)
    const again = await verify(h, token)
    expect(again.status).toBe(410)
    expect(await again.json()).toEqual({ error: 'Invite already used', code: 'INVITE_USED' })
  })

  it("an admin invite for an email accepts that email in any case; the token in upper case", async () => {
    const res = await call(h, 'POST', '/api/admin/invites', { user: h.users.admin, body: { email: 'Star@Example.com' } })
    const { code } = await res.json()
    const signed = await signUp({ email: 'STAR@example.COM', token: code.toUpperCase() })
    expect(signed.status).toBe(201)
    expect((await inviteByCode(code)).usedBy).toBe((await signed.json()).id)
  })

  it('an unexpired invite with a future expiry redeems', async () => {
    const row = await insertInvite(h, { expiresAt: new Date(Date.now() + 60_000) })
    expect((await signUp({ email: 'future@example.com', token: row.code })).status).toBe(201)
  })
})

describe('sign-up with an invite: errors (no user created, invite untouched)', () => {
  it.each([
    ['63 hex', 'a'.repeat(63)],
    ['65 hex', 'a'.repeat(65)],
    ['non-hex', 'z'.repeat(64)],
    ['a number', 42],
  ])('malformed token (%s) → 400 VALIDATION Invalid invite token', async (label, token) => {
    const email = `malformed-${label.replace(/\W/g, '')}@example.com`
    const res = await signUp({ email, token })
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ error: 'Invalid invite token', code: 'VALIDATION' })
    expect(await userByEmail(email)).toEqual([])
  })

  it('unknown token → 400 Invalid invite token', async () => {
    const res = await signUp({ email: 'unknown-token@example.com', token: newCode() })
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({ error: 'Invalid invite token', code: 'INVALID_INVITE' })
    expect(await userByEmail('unknown-token@example.com')).toEqual([])
  })

  it('used → 410 Invite already used', async () => {
    const usedAt = new Date(Date.now() - 60_000)
    const row = await insertInvite(h, { usedAt })
    const res = await signUp({ email: 'late@example.com', token: row.code })
    expect(res.status).toBe(410)
    expect(await res.json()).toEqual({ error: 'Invite already used', code: 'INVITE_USED' })
    expect(await userByEmail('late@example.com')).toEqual([])
    expect((await inviteByCode(row.code)).usedAt).toEqual(usedAt)
  })

  it('expired (even by a millisecond) → 410 Invite expired', async () => {
    const row = await insertInvite(h, { expiresAt: new Date(Date.now() - 1) })
    const res = await signUp({ email: 'expired@example.com', token: row.code })
    expect(res.status).toBe(410)
    expect(await res.json()).toEqual({ error: 'Invite expired', code: 'INVITE_EXPIRED' })
    expect(await userByEmail('expired@example.com')).toEqual([])
    expect((await inviteByCode(row.code)).usedAt).toBeNull()
  })

  it('an invite for another email → 403, and it stays redeemable by its addressee', async () => {
    const row = await insertInvite(h, { email: 'intended@example.com' })
    const res = await signUp({ email: 'interloper@example.com', token: row.code })
    expect(res.status).toBe(403)
    expect(await res.json()).toEqual({ error: 'Invite is for another email', code: 'INVITE_EMAIL_MISMATCH' })
    expect(await userByEmail('interloper@example.com')).toEqual([])
    expect((await inviteByCode(row.code)).usedAt).toBeNull()
    expect((await signUp({ email: 'intended@example.com', token: row.code })).status).toBe(201)
  })

  it('an existing email is still 409, and the invite is not spent', async () => {
    const row = await insertInvite(h)
    const res = await signUp({ email: h.users.bob.email, token: row.code })
    expect(res.status).toBe(409)
    expect((await inviteByCode(row.code)).usedAt).toBeNull()
  })

  it('a failed referral rolls back before the invite is spent', async () => {
    const row = await insertInvite(h)
    const res = await signUp({ email: 'badref@example.com', token: row.code, referralCode: 'NOPE-999' })
    expect(res.status).toBe(400)
    expect((await inviteByCode(row.code)).usedAt).toBeNull()
  })
})

describe('sign-up with an invite: security', () => {
  it('8 parallel sign-ups with one token: exactly one 201, seven 410, one new user', async () => {
    const row = await insertInvite(h)
    const emails = Array.from({ length: 8 }, (_, i) => `racer${i}@example.com`)
    const results = await Promise.all(emails.map((email) => signUp({ email, token: row.code })))
    expect(results.map((r) => r.status).sort()).toEqual([201, 410, 410, 410, 410, 410, 410, 410])
    for (const r of results.filter((r) => r.status === 410)) expect(await r.json()).toEqual({ error: 'Invite already used', code: 'INVITE_USED' })
    const winner = await results.find((r) => r.status === 201)!.json()
    const created = await h.db.select().from(users).where(inArray(users.email, emails))
    expect(created.map((u) => u.id)).toEqual([winner.id])
    expect((await inviteByCode(row.code)).usedBy).toBe(winner.id)
    const res = await verify(h, row.code)
    expect(res.status).toBe(410)
  })
})
