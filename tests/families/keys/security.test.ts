import { eq } from 'drizzle-orm'
import { beforeAll, describe, expect, it } from 'vitest'
import { hashSecret } from '../../../lib/auth/password'
import { withUser } from '../../../lib/db/rls'
import { apiKeys } from '../../../schema'
import { useHarness } from '../../support/harness'
import { expectOwnRowsOnly } from '../../support/rls'
import { call, FORBIDDEN_ORIGIN } from '../../support/requests'
import { type CreatedKey, createKey, listKeys, validate } from './helpers'

let aliceKey: CreatedKey
let bobKey: CreatedKey
const h = useHarness()
beforeAll(async () => {
  aliceKey = await createKey(h, h.users.alice, 'alice-key')
  bobKey = await createKey(h, h.users.bob, 'bob-key')
})

const aliceRowExists = async () => (await h.db.select().from(apiKeys).where(eq(apiKeys.id, aliceKey.id))).length === 1

// Without a session, with a forged one (an invalid body too), and bob's GET and DELETE of alice's key:
// tests/families/common-route-checks.test.ts.
describe('keys: authentication', () => {
  it('a foreign Origin with a valid cookie → 403 on POST and DELETE; nothing created or deleted', async () => {
    const evil = { origin: 'http://evil.example' }
    const before = (await listKeys(h, h.users.alice)).length
    const post = await call(h, 'POST', '/api/keys', { user: h.users.alice, body: { name: 'csrf' }, headers: evil })
    expect(post.status).toBe(403)
    expect(await post.json()).toEqual(FORBIDDEN_ORIGIN)
    const del = await call(h, 'DELETE', `/api/keys/${aliceKey.id}`, { user: h.users.alice, headers: evil })
    expect(del.status).toBe(403)
    expect((await listKeys(h, h.users.alice)).length).toBe(before)
    expect(await aliceRowExists()).toBe(true)
  })
})

describe('keys: ownership through the API', () => {
  it("bob's list holds only bob's keys", async () => {
    const ids = (await listKeys(h, h.users.bob)).map((k) => k.id)
    expect(ids).toEqual([bobKey.id])
  })

  it('the raw key and its hashes never appear in list or get responses', async () => {
    const [row] = await h.db.select().from(apiKeys).where(eq(apiKeys.id, aliceKey.id))
    const texts = [
      await (await call(h, 'GET', '/api/keys', { user: h.users.alice })).text(),
      await (await call(h, 'GET', `/api/keys/${aliceKey.id}`, { user: h.users.alice })).text(),
    ]
    for (const text of texts) {
      expect(text).toContain(aliceKey.prefix)
      for (const secret of [aliceKey.key, row.keyHash, row.keySha256]) expect(text).not.toContain(secret)
    }
  })
})

describe('keys: the database policy itself', () => {
  it("bob's transaction sees none of alice's rows, even without a where", async () => {
    await expectOwnRowsOnly(h.db, h.users.bob.id, apiKeys)
  })

  it("bob's transaction deletes nothing of alice's", async () => {
    const deleted = await withUser(h.db, h.users.bob.id, (tx) => tx.delete(apiKeys).where(eq(apiKeys.id, aliceKey.id)).returning())
    expect(deleted).toEqual([])
    expect(await aliceRowExists()).toBe(true)
  })

  it('bob cannot insert a key row owned by alice', async () => {
    const forged = { userId: h.users.alice.id, name: 'forged', prefix: 'sk_forged0', keyHash: await hashSecret('x', 4), keySha256: 'forged-sha' }
    await expect(withUser(h.db, h.users.bob.id, (tx) => tx.insert(apiKeys).values(forged))).rejects.toThrow()
    expect(await h.db.select().from(apiKeys).where(eq(apiKeys.keySha256, 'forged-sha'))).toEqual([])
  })
})

describe('keys: validation cannot be fooled', () => {
  it('each key validates as its own owner', async () => {
    const a = await (await validate(h, aliceKey.key)).json()
    const b = await (await validate(h, bobKey.key)).json()
    expect(a).toMatchObject({ valid: true, userId: h.users.alice.id, email: h.users.alice.email })
    expect(b).toMatchObject({ valid: true, userId: h.users.bob.id, email: h.users.bob.email })
  })

  it('a tampered key (last character changed) → 401', async () => {
    const last = aliceKey.key.at(-1)!
    const tampered = aliceKey.key.slice(0, -1) + (last === '0' ? '1' : '0')
    const res = await validate(h, tampered)
    expect(res.status).toBe(401)
    expect(await res.json()).toEqual({ error: 'Invalid API key', code: 'INVALID_API_KEY' })
  })

  it('the stored bcrypt hash must match too, not only the SHA-256', async () => {
    const k = await createKey(h, h.users.bob, 'bcrypt-checked')
    await h.db.update(apiKeys).set({ keyHash: await hashSecret('something else', 4) }).where(eq(apiKeys.id, k.id))
    expect((await validate(h, k.key)).status).toBe(401)
  })

  it('the answer carries no secrets', async () => {
    const body = (await (await validate(h, aliceKey.key)).json()) as Record<string, unknown>
    expect(Object.keys(body).sort()).toEqual(['email', 'features', 'plan', 'subscriptionStatus', 'userId', 'valid'])
  })
})
