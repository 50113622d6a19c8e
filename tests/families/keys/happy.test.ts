import { eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { verifySecret } from '../../../lib/auth/password'
import { PLANS } from '../../../lib/billing/plans'
import { sha256Hex } from '../../../lib/crypto'
import { apiKeys, users } from '../../../schema'
import { webClient } from '../../support/client'
import { useHarness } from '../../support/harness'
import { createKey, listKeys, validate } from './helpers'

const h = useHarness()

describe('keys: happy paths', () => {
  it('create → 201 with the raw key once, no-store, and the documented shape', async () => {
    const res = await webClient(h, h.users.alice).api.keys.$post({ json: { name: '  CI deploys  ' } })
    expect(res.status).toBe(201)
    expect(res.headers.get('cache-control')).toBe('no-store')
    if (res.status !== 201) return
    const body = await res.json()
    expect(Object.keys(body).sort()).toEqual(['createdAt', 'id', 'key', 'name', 'prefix'])
    expect(body.key).toMatch(/^sk_[0-9a-f]{64}$/)
    expect(body.prefix).toBe(body.key.slice(0, 10))
    expect(body.name).toBe('CI deploys') // trimmed
    expect(new Date(body.createdAt).toISOString()).toBe(body.createdAt)
  })

  it('a 64-character name is accepted', async () => {
    const k = await createKey(h, h.users.alice, 'x'.repeat(64))
    expect(k.name).toHaveLength(64)
  })

  it('stores the lookup prefix, a bcrypt hash and the SHA-256 of the key, never the key', async () => {
    const k = await createKey(h, h.users.alice, 'stored')
    const [row] = await h.db.select().from(apiKeys).where(eq(apiKeys.id, k.id))
    expect(row.userId).toBe(h.users.alice.id)
    expect(row.prefix).toBe(k.key.slice(0, 10))
    expect(row.keyHash).toMatch(/^\$2[aby]\$/)
    expect(await verifySecret(k.key, row.keyHash)).toBe(true)
    expect(row.keySha256).toBe(await sha256Hex(k.key))
    expect(Object.values(row)).not.toContain(k.key)
  })

  it('list: newest first, only id/name/prefix/createdAt/lastUsedAt; get returns the same item', async () => {
    const { bob } = h.users
    const first = await createKey(h, bob, 'first')
    const second = await createKey(h, bob, 'second')
    const keys = await listKeys(h, bob)
    expect(keys.map((k) => k.id)).toEqual([second.id, first.id])
    for (const k of keys) expect(Object.keys(k).sort()).toEqual(['createdAt', 'id', 'lastUsedAt', 'name', 'prefix'])
    expect(keys[1]).toEqual({ id: first.id, name: 'first', prefix: first.prefix, createdAt: first.createdAt, lastUsedAt: null })

    const res = await webClient(h, bob).api.keys[':id'].$get({ param: { id: first.id } })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual(keys[1])
  })

  it('validate → the owner, normalised plan, status and features; lastUsedAt is then set', async () => {
    const { alice } = h.users
    const k = await createKey(h, alice, 'to validate')
    const res = await validate(h, k.key) // no cookie: no session needed
    expect(res.status).toBe(200)
    expect(res.headers.get('ratelimit-limit')).toBe('60')
    expect(await res.json()).toEqual({
      valid: true,
      userId: alice.id,
      email: alice.email,
      plan: 'solo',
      subscriptionStatus: 'inactive',
      features: [...PLANS.solo.features],
    })
    const got = await webClient(h, alice).api.keys[':id'].$get({ param: { id: k.id } })
    if (got.status !== 200) throw new Error(`status ${got.status}`)
    expect((await got.json()).lastUsedAt).not.toBeNull()
  })

  it('validate reports a legacy plan as its current name', async () => {
    const user = await h.seedUser('Carol', 'carol@example.com')
    await h.db.update(users).set({ plan: 'pro', subscriptionStatus: 'active' }).where(eq(users.id, user.id))
    const k = await createKey(h, user)
    const body = await (await validate(h, k.key)).json()
    expect(body).toMatchObject({ userId: user.id, plan: 'collective', subscriptionStatus: 'active', features: [...PLANS.collective.features] })
  })

  it('delete → {success, id}; the key is then gone from get, list and validate', async () => {
    const { alice } = h.users
    const k = await createKey(h, alice, 'doomed')
    const client = webClient(h, alice)
    const res = await client.api.keys[':id'].$delete({ param: { id: k.id } })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ success: true, id: k.id })
    expect((await client.api.keys[':id'].$get({ param: { id: k.id } })).status).toBe(404)
    expect((await listKeys(h, alice)).map((x) => x.id)).not.toContain(k.id)
    expect((await validate(h, k.key)).status).toBe(401)
  })

  it('the web OpenAPI document describes all five operations', async () => {
    const doc = (await (await h.web.request('/api/openapi.json')).json()) as { paths: Record<string, Record<string, unknown>> }
    expect(Object.keys(doc.paths['/api/keys']).sort()).toEqual(['get', 'post'])
    expect(Object.keys(doc.paths['/api/keys/{id}']).sort()).toEqual(['delete', 'get'])
    expect(Object.keys(doc.paths['/api/keys/validate'])).toEqual(['post'])
  })
})
