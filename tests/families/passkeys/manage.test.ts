import { eq } from 'drizzle-orm'
import { beforeAll, describe, expect, it, vi } from 'vitest'
import { passkeys } from '../../../schema'
import { useHarness } from '../../support/harness'
import { enrol, listPasskeys, manage, signIn } from './helpers'

/** Finding 8: a passkey could neither be seen nor removed. GET /api/passkeys and DELETE /api/passkeys/{id}. */
const h = useHarness()
beforeAll(async () => {
  vi.spyOn(console, 'info').mockImplementation(() => {}) // the dev outbox logs each mail
})

let n = 0
const freshUser = () => h.seedUser('Pat', `pat-${++n}-${crypto.randomUUID().slice(0, 8)}@example.com`)
const rowExists = async (id: string) => (await h.db.select().from(passkeys).where(eq(passkeys.id, id))).length === 1

describe('passkeys: list', () => {
  it('a user without passkeys gets an empty list', async () => {
    expect(await listPasskeys(h, await freshUser())).toEqual([])
  })

  it('lists id, label, createdAt, lastUsedAt of the own passkeys, newest first; never the public key', async () => {
    const user = await freshUser()
    const laptop = await enrol(h, user, 'Laptop')
    await new Promise((r) => setTimeout(r, 5))
    const phone = await enrol(h, user, 'Phone')
    const res = await manage(h, 'GET', '/api/passkeys', { user })
    expect(res.status).toBe(200)
    const { passkeys: list } = (await res.json()) as { passkeys: Array<Record<string, unknown>> }
    expect(list.map((p) => p.id)).toEqual([phone.id, laptop.id])
    for (const p of list) {
      expect(Object.keys(p).sort()).toEqual(['createdAt', 'id', 'label', 'lastUsedAt'])
      expect(new Date(p.createdAt as string).toISOString()).toBe(p.createdAt)
      expect(p.lastUsedAt).toBeNull()
    }
    expect(list.map((p) => p.label)).toEqual(['Phone', 'Laptop'])
    const [row] = await h.db.select().from(passkeys).where(eq(passkeys.id, phone.id))
    expect(JSON.stringify(list)).not.toContain(row.publicKey)
  })

  it('lastUsedAt is set by a sign-in with the passkey', async () => {
    const user = await freshUser()
    const key = await enrol(h, user, 'Key')
    expect((await signIn(h, user.email, key)).res.status).toBe(200)
    const [item] = await listPasskeys(h, user)
    expect(item.lastUsedAt).not.toBeNull()
    expect(Date.now() - Date.parse(item.lastUsedAt!)).toBeLessThan(60_000)
  })

  it("shows only the caller's passkeys", async () => {
    const a = await freshUser()
    const b = await freshUser()
    const aKey = await enrol(h, a, 'A')
    const bKey = await enrol(h, b, 'B')
    expect((await listPasskeys(h, a)).map((p) => p.id)).toEqual([aKey.id])
    expect((await listPasskeys(h, b)).map((p) => p.id)).toEqual([bKey.id])
  })
})

describe('passkeys: delete', () => {
  it('removes the own passkey: 200 {success, id}, gone from the list, and it signs in no more', async () => {
    const user = await freshUser()
    const key = await enrol(h, user, 'Old phone')
    const res = await manage(h, 'DELETE', `/api/passkeys/${key.id}`, { user })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ success: true, id: key.id })
    expect(await listPasskeys(h, user)).toEqual([])
    const { res: attempt } = await signIn(h, user.email, key)
    expect(attempt.status).toBe(401)
    expect(await attempt.json()).toEqual({ error: 'Passkey sign-in failed', code: 'PASSKEY_AUTH_FAILED' })
  })

  it('deleting twice: the second is 404', async () => {
    const user = await freshUser()
    const key = await enrol(h, user, 'Twice')
    expect((await manage(h, 'DELETE', `/api/passkeys/${key.id}`, { user })).status).toBe(200)
    expect((await manage(h, 'DELETE', `/api/passkeys/${key.id}`, { user })).status).toBe(404)
  })

  it('an id that is no credential id → 400 VALIDATION, before any query', async () => {
    const user = await freshUser()
    for (const id of ['not.base64url', 'a%00b', 'x'.repeat(1401)]) {
      const res = await manage(h, 'DELETE', `/api/passkeys/${id}`, { user })
      expect(res.status, id.slice(0, 20)).toBe(400)
      // a NUL is refused by the shared URL guard before routing; the others by the route's id schema
      expect(await res.json()).toMatchObject({ error: id === 'a%00b' ? expect.any(String) : 'Invalid passkey id', code: 'VALIDATION' })
    }
  })
})

// Without a session, with a forged one, and another user's passkey: tests/families/common-route-checks.test.ts.
describe('passkeys: management needs the owner', () => {
  it('a DELETE from a foreign Origin → 403 ORIGIN_NOT_ALLOWED; nothing removed', async () => {
    const user = await freshUser()
    const key = await enrol(h, user, 'Kept')
    const res = await manage(h, 'DELETE', `/api/passkeys/${key.id}`, { user, headers: { origin: 'https://evil.example' } })
    expect(res.status).toBe(403)
    expect(await res.json()).toMatchObject({ code: 'ORIGIN_NOT_ALLOWED' })
    expect(await rowExists(key.id)).toBe(true)
  })
})
