import { and, eq, sql } from 'drizzle-orm'
import { beforeAll, describe, expect, it } from 'vitest'
import { createBackendApp } from '../../../functions/backend/app'
import { generateApiKey } from '../../../lib/auth/api-keys'
import { signedIdentityHeaders } from '../../../lib/auth/identity'
import { withUser } from '../../../lib/db/rls'
import { installations } from '../../../schema'
import { insertApiKey, withConfig } from '../../auth/helpers'
import { useHarness } from '../../support/harness'
import { expectOwnRowsOnly } from '../../support/rls'
import { backendCall } from '../../support/requests'

/** Installation registration: who may register, list, read tokens and send heartbeats for whom. */
const HMAC = 'test-hmac'
const INTERNAL = 'test-internal'
let aliceKey: string
let adminKey: string
type Who = { id: string; email: string }

const h = useHarness({ env: { HMAC_SECRET: HMAC, INTERNAL_API_KEY: INTERNAL } })
beforeAll(async () => {
  aliceKey = (await insertApiKey(h.db, h.users.alice.id)).key
  adminKey = (await insertApiKey(h.db, h.users.admin.id)).key
  // Both users start with a home installation, last seen an hour ago, so any update shows.
  for (const u of [h.users.alice, h.users.bob]) {
    await h.db.insert(installations).values({ userId: u.id, mode: 'home', gatewayToken: `token-of-${u.name}` })
  }
  await staleAll()
})

const signed = (u: Who, role = 'user', secret = HMAC) => signedIdentityHeaders(secret, { userId: u.id, email: u.email, role })
const call = (method: string, path: string, opts: Parameters<typeof backendCall>[3] = {}, app = h.backend) => backendCall(app, method, path, opts)
const ONE_HOUR_AGO = sql`now() - interval '1 hour'`
const staleAll = () => h.db.update(installations).set({ lastSeen: ONE_HOUR_AGO, status: 'inactive' })
const homeOf = async (userId: string) =>
  (await h.db.select().from(installations).where(and(eq(installations.userId, userId), eq(installations.mode, 'home'))))[0]
const touched = async (userId: string) => {
  const row = await homeOf(userId)
  return row.status === 'active' && Date.now() - row.lastSeen.getTime() < 60_000
}
const INVALID_SIGNATURE = { error: 'Invalid signature', code: 'INVALID_SIGNATURE' }

describe('backend installations: a user registers only themself', () => {
  it("alice's identity registering bob is 403 Forbidden and writes nothing for bob", async () => {
    const { alice, bob } = h.users
    for (const path of ['/api/register-home', '/api/register-link']) {
      const res = await call('POST', path, { headers: await signed(alice), body: { userId: bob.id, gatewayToken: 'hijack' } })
      expect(res.status, path).toBe(403)
      expect(await res.json()).toEqual({ error: 'Forbidden', code: 'FORBIDDEN' })
    }
    const bobs = await h.db.select().from(installations).where(eq(installations.userId, bob.id))
    expect(bobs.map((r) => [r.mode, r.gatewayToken])).toEqual([['home', 'token-of-Bob']])
  })

  it("a role claim is not admin: alice signed as role admin still cannot register bob; alice's API key cannot either", async () => {
    const { alice, bob } = h.users
    const asRole = await call('POST', '/api/register-link', { headers: await signed(alice, 'admin'), body: { userId: bob.id } })
    expect(asRole.status).toBe(403)
    const byKey = await call('POST', '/api/register-link', { headers: { authorization: `Bearer ${aliceKey}` }, body: { userId: bob.id } })
    expect(byKey.status).toBe(403)
    expect(await byKey.json()).toEqual({ error: 'Forbidden', code: 'FORBIDDEN' })
    expect(await h.db.select().from(installations).where(and(eq(installations.userId, bob.id), eq(installations.mode, 'link')))).toEqual([])
  })

  it('an admin (signed admin email, or the admin\'s own API key) may register for bob', async () => {
    const { bob, admin } = h.users
    const res = await call('POST', '/api/register-link', { headers: await signed(admin), body: { userId: bob.id, gatewayToken: 'by-admin' } })
    expect(res.status).toBe(200)
    const byKey = await call('POST', '/api/register-home', { headers: { authorization: `Bearer ${adminKey}` }, body: { userId: bob.id, mode: 'cloud' } })
    expect(byKey.status).toBe(200)
    const modes = (await h.db.select().from(installations).where(eq(installations.userId, bob.id))).map((r) => r.mode).sort()
    expect(modes).toEqual(['cloud', 'home', 'link'])
    await h.db.delete(installations).where(and(eq(installations.userId, bob.id), sql`${installations.mode} <> 'home'`))
  })

  it('tampered or missing signatures are 401 and register nothing', async () => {
    const { alice, bob } = h.users
    const headers = await signed(alice)
    for (const [name, value] of [
      ['x-user-id', bob.id],
      ['x-user-email', h.users.admin.email],
      ['x-user-role', 'admin'],
      ['x-user-signature', '0'.repeat(64)],
    ]) {
      const res = await call('POST', '/api/register-link', { headers: { ...headers, [name]: value }, body: { userId: bob.id } })
      expect(res.status, name).toBe(401)
      expect(await res.json()).toEqual(INVALID_SIGNATURE)
    }
    const other = await call('POST', '/api/register-link', { headers: await signed(bob, 'user', 'another-secret'), body: { userId: bob.id } })
    expect(await other.json()).toEqual(INVALID_SIGNATURE)
    const unsigned = await call('POST', '/api/register-link', { headers: { 'x-user-id': bob.id }, body: { userId: bob.id } })
    expect(unsigned.status).toBe(401)
    expect(await unsigned.json()).toEqual({ error: 'Signature required', code: 'SIGNATURE_REQUIRED' })
    const list = await call('GET', '/api/installations')
    expect(list.status).toBe(401)
    expect(await h.db.select().from(installations).where(eq(installations.mode, 'link'))).toEqual([])
  })

  it("a bad API key is 401 Invalid API key (never a fallback to the headers); a key wins over headers sent with it", async () => {
    const { alice, bob } = h.users
    const samePrefix = aliceKey.slice(0, 10) + '0'.repeat(aliceKey.length - 10)
    for (const key of [generateApiKey(), samePrefix, 'sk_short', `${aliceKey}0`]) {
      const res = await call('POST', '/api/register-home', { headers: { ...(await signed(bob)), authorization: `Bearer ${key}` }, body: { userId: bob.id } })
      expect(res.status, key).toBe(401)
      expect(await res.json()).toEqual({ error: 'Invalid API key', code: 'INVALID_API_KEY' })
    }
    // The shared key is not an API key: it is not `sk_`, so the identity headers decide (here: none).
    const shared = await call('GET', '/api/installations', { headers: { authorization: `Bearer ${INTERNAL}` } })
    expect(shared.status).toBe(401)
    // alice's key with bob's signed headers: the key is the caller.
    const res = await call('GET', '/api/installations', { headers: { ...(await signed(bob)), authorization: `Bearer ${aliceKey}` } })
    const body = await res.json()
    expect(body.installations.map((i: { user_id: string }) => i.user_id)).toEqual([alice.id])
  })
})

describe('backend installations: reads are confined to the caller', () => {
  it("bob's list never includes alice's; the admin's list is the admin's own", async () => {
    const { alice, bob, admin } = h.users
    const bobs = await (await call('GET', '/api/installations', { headers: await signed(bob) })).json()
    expect(bobs.count).toBe(1)
    expect(bobs.installations.map((i: { user_id: string }) => i.user_id)).toEqual([bob.id])
    expect(JSON.stringify(bobs)).not.toContain(alice.id)
    const admins = await (await call('GET', '/api/installations', { headers: await signed(admin) })).json()
    expect(admins).toEqual({ success: true, count: 0, installations: [] })
  })

  it("row-level security: as bob, a query with no where clause sees no row of alice's", async () => {
    const { alice, bob } = h.users
    await expectOwnRowsOnly(h.db, bob.id, installations)
    // Nor can bob's connection write alice's rows.
    const updated = await withUser(h.db, bob.id, (tx) => tx.update(installations).set({ gatewayToken: 'x' }).where(eq(installations.userId, alice.id)).returning())
    expect(updated).toEqual([])
    await expect(withUser(h.db, bob.id, (tx) => tx.insert(installations).values({ userId: alice.id, mode: 'link' }))).rejects.toThrow()
  })

  it('the registration token needs the shared key: none 401, wrong 403, identity headers or a user key are not it', async () => {
    const path = `/api/registration/token?userId=${h.users.alice.id}`
    const missing = await call('GET', path)
    expect(missing.status).toBe(401)
    expect(await missing.json()).toEqual({ error: 'Unauthorized', code: 'UNAUTHORIZED' })
    const wrong = await call('GET', path, { headers: { authorization: 'Bearer not-the-key' } })
    expect(wrong.status).toBe(403)
    expect(await wrong.json()).toEqual({ error: 'Forbidden', code: 'FORBIDDEN' })
    expect((await call('GET', path, { headers: await signed(h.users.alice) })).status).toBe(401)
    expect((await call('GET', path, { headers: { authorization: `Bearer ${aliceKey}` } })).status).toBe(403)
    // Checked before the query: a caller without the key learns nothing, not even that userId is missing.
    expect((await call('GET', '/api/registration/token')).status).toBe(401)
    const right = await call('GET', path, { headers: { authorization: `Bearer ${INTERNAL}` } })
    expect(await right.json()).toEqual({ gateway_token: 'token-of-Alice' })
  })

  it('with INTERNAL_API_KEY unset the registration token is 500 Server misconfigured', async () => {
    const app = createBackendApp(() => withConfig(h.services, { INTERNAL_API_KEY: undefined }))
    const res = await call('GET', `/api/registration/token?userId=${h.users.alice.id}`, { headers: { authorization: 'Bearer anything' } }, app)
    expect(res.status).toBe(500)
    expect(await res.json()).toEqual({ error: 'Server misconfigured', code: 'MISCONFIGURED' })
  })
})

describe('backend installations: heartbeats never reject, but only a verified caller updates', () => {
  it('a forged, missing or foreign-secret signature, or a bad key: 200 and nothing updated', async () => {
    const { alice } = h.users
    await staleAll()
    const good = await signed(alice)
    const attempts: Record<string, string>[] = [
      { ...good, 'x-user-signature': 'f'.repeat(64) },
      { 'x-user-id': alice.id, 'x-user-email': alice.email },
      await signed(alice, 'user', INTERNAL), // HMAC_SECRET is set, so INTERNAL_API_KEY does not sign
      { authorization: `Bearer ${generateApiKey()}` },
      {},
    ]
    for (const headers of attempts) {
      const res = await call('POST', '/api/heartbeat', { headers, body: { userId: alice.id } })
      expect(res.status).toBe(200)
      expect((await res.json()).success).toBe(true)
    }
    expect(await touched(alice.id)).toBe(false)
  })

  it("a non-admin naming another user's id updates only their own installations", async () => {
    const { alice, bob } = h.users
    await staleAll()
    expect((await call('POST', '/api/heartbeat', { headers: await signed(alice), body: { userId: bob.id } })).status).toBe(200)
    expect(await touched(bob.id)).toBe(false)
    expect(await touched(alice.id)).toBe(true)
    await staleAll()
    expect((await call('POST', '/api/heartbeat', { headers: { authorization: `Bearer ${aliceKey}` }, body: { userId: bob.id } })).status).toBe(200)
    expect(await touched(bob.id)).toBe(false)
    expect(await touched(alice.id)).toBe(true)
  })

  it("an admin may send a heartbeat for another user's installations", async () => {
    const { alice, bob, admin } = h.users
    await staleAll()
    expect((await call('POST', '/api/heartbeat', { headers: await signed(admin), body: { userId: bob.id } })).status).toBe(200)
    expect(await touched(bob.id)).toBe(true)
    expect(await touched(alice.id)).toBe(false)
  })
})
