import { count, eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { withUser } from '../../../lib/db/rls'
import { invites } from '../../../schema'
import { useHarness } from '../../support/harness'
import { call } from '../../support/requests'
import { adminCreate, BASE_URL, createInvite, insertInvite, listInvites, verify } from './helpers'

const h = useHarness()

describe('invites: happy paths', () => {
  it('create → 200 {success, inviteUrl, token} with a 64-hex token and no-store', async () => {
    const res = await call(h, 'POST', '/api/invite', { user: h.users.alice, body: { name: 'Mary Jane' } })
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    const body = await res.json()
    expect(Object.keys(body).sort()).toEqual(['inviteUrl', 'success', 'token'])
    expect(body.success).toBe(true)
    expect(body.token).toMatch(/^[0-9a-f]{64}$/)
    expect(body.inviteUrl).toBe(`${BASE_URL}/invite?token=${body.token}&name=Mary%20Jane`)
  })

  it.each([
    ["Siobhán O'Brien", "Siobh%C3%A1n%20O'Brien"],
    ['李小龍', '%E6%9D%8E%E5%B0%8F%E9%BE%8D'],
    ['Zoë-Anne St. Clair', 'Zo%C3%AB-Anne%20St.%20Clair'],
    ['  Padded  ', 'Padded'],
    ['x'.repeat(64), 'x'.repeat(64)],
  ])('inviteUrl encodes %j with encodeURIComponent', async (name, encoded) => {
    const { inviteUrl, token } = await createInvite(h, h.users.alice, name)
    expect(encoded).toBe(encodeURIComponent(name.trim()))
    expect(inviteUrl).toBe(`${BASE_URL}/invite?token=${token}&name=${encoded}`)
    expect(new URL(inviteUrl).searchParams.get('name')).toBe(name.trim())
  })

  it('saves the invite: creator, trimmed name, audience guest, no email, no expiry, unused', async () => {
    const { token } = await createInvite(h, h.users.alice, "  Dara O'Neill ")
    const [row] = await h.db.select().from(invites).where(eq(invites.code, token))
    expect(row).toMatchObject({ code: token, name: "Dara O'Neill", audience: 'guest', email: null, createdBy: h.users.alice.id, usedAt: null, usedBy: null, expiresAt: null })
    // and the creator sees it through row-level security
    const mine = await withUser(h.db, h.users.alice.id, (tx) => tx.select().from(invites).where(eq(invites.code, token)))
    expect(mine).toHaveLength(1)
  })

  it('every invite gets its own token', async () => {
    const a = await createInvite(h, h.users.bob, 'Same Name')
    const b = await createInvite(h, h.users.bob, 'Same Name')
    expect(a.token).not.toBe(b.token)
  })

  it('verify a user invite → {valid, plan solo, audience guest, email null}, no note', async () => {
    const { token } = await createInvite(h, h.users.alice, 'Verified Guest')
    const res = await verify(h, token)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ valid: true, plan: 'solo', audience: 'guest', email: null })
  })

  it('verify accepts the token in upper case', async () => {
    const { token } = await createInvite(h, h.users.alice, 'Upper')
    const res = await verify(h, token.toUpperCase())
    expect(res.status).toBe(200)
  })

  it('admin create → 201 with a lower-cased email, default audience headliner, and a URL without name', async () => {
    const res = await call(h, 'POST', '/api/admin/invites', { user: h.users.admin, body: { email: '  New.Star@Example.COM ' } })
    expect(res.status).toBe(201)
    const body = await res.json()
    expect(Object.keys(body).sort()).toEqual(['audience', 'code', 'email', 'invite', 'inviteUrl', 'success'])
    expect(body).toMatchObject({ success: true, email: 'new.star@example.com', audience: 'headliner' })
    expect(body.code).toMatch(/^[0-9a-f]{64}$/)
    expect(body.inviteUrl).toBe(`${BASE_URL}/invite?token=${body.code}`)
    expect(body.invite).toEqual({ code: body.code, email: 'new.star@example.com', audience: 'headliner', createdAt: expect.any(String), status: 'active' })
    const [row] = await h.db.select().from(invites).where(eq(invites.code, body.code))
    expect(row).toMatchObject({ email: 'new.star@example.com', audience: 'headliner', createdBy: h.users.admin.id, name: null })
    expect(await (await verify(h, body.code)).json()).toEqual({ valid: true, plan: 'headliner', audience: 'headliner', email: 'new.star@example.com' })
  })

  it('admin create with audience and expiresAt (with an offset) → stored and echoed; plan solo for partner', async () => {
    const when = new Date(Date.now() + 24 * 60 * 60 * 1000)
    const withOffset = when.toISOString().replace('Z', '+00:00')
    const created = await adminCreate(h, { email: 'partner@example.com', audience: 'partner', expiresAt: withOffset })
    expect(created.audience).toBe('partner')
    expect(created.invite.expiresAt).toBe(when.toISOString())
    expect(created.invite.status).toBe('active')
    expect((await (await verify(h, created.code)).json()).plan).toBe('solo')
  })

  it('admin list: newest first, total and active over all invites, documented fields only', async () => {
    const first = await adminCreate(h, { email: 'first@example.com', audience: 'guest' })
    const second = await adminCreate(h, { email: 'second@example.com' })
    const list = await listInvites(h)
    expect(list.invites.slice(0, 2).map((i) => i.code)).toEqual([second.code, first.code])
    const stamps = list.invites.map((i) => Date.parse(i.createdAt))
    expect(stamps).toEqual([...stamps].sort((a, b) => b - a))
    const [{ n }] = await h.db.select({ n: count() }).from(invites)
    expect(list.total).toBe(n)
    expect(list.active).toBe(list.invites.filter((i) => i.status === 'active').length) // all fit in one page here
    expect(list.invites.find((i) => i.code === first.code)).toEqual(first.invite)
    for (const i of list.invites) {
      for (const k of Object.keys(i)) expect(['code', 'email', 'audience', 'createdAt', 'usedAt', 'expiresAt', 'status']).toContain(k)
    }
  })

  it('status: used when usedAt is set (even if also expired), expired once expiresAt passed, else active', async () => {
    const past = new Date(Date.now() - 60_000)
    const future = new Date(Date.now() + 60_000)
    const used = await insertInvite(h, { email: 'u@example.com', usedAt: past, expiresAt: future })
    const usedAndExpired = await insertInvite(h, { email: 'ue@example.com', usedAt: new Date(Date.now() - 120_000), expiresAt: past })
    const expired = await insertInvite(h, { email: 'e@example.com', expiresAt: past })
    const active = await insertInvite(h, { email: 'a@example.com', expiresAt: future })
    const open = await insertInvite(h, { email: 'o@example.com' })
    const byCode = new Map((await listInvites(h)).invites.map((i) => [i.code, i]))
    expect(byCode.get(used.code)).toMatchObject({ status: 'used', usedAt: past.toISOString(), expiresAt: future.toISOString() })
    expect(byCode.get(usedAndExpired.code)!.status).toBe('used')
    expect(byCode.get(expired.code)).toMatchObject({ status: 'expired', expiresAt: past.toISOString() })
    expect(byCode.get(expired.code)).not.toHaveProperty('usedAt')
    expect(byCode.get(active.code)!.status).toBe('active')
    expect(byCode.get(open.code)).not.toHaveProperty('expiresAt')
    expect(byCode.get(open.code)).not.toHaveProperty('usedAt')
    expect(byCode.get(open.code)!.status).toBe('active')
  })
})
