import { beforeAll, describe, expect, it } from 'vitest'
import { json, login } from '../families/auth/flow'
import { BROWSER, PASSWORD, useHarness } from '../support/harness'
import { cost } from '../support/round-trips'

// Pins the database and kv round trips of the hot requests, on the embedded stores and on the production
// drivers (Neon's HTTP endpoint and WebSocket through the local proxy, Upstash REST): a change that adds one
// fails here. Embedded, a PGlite transaction counts as one call; on real stores every network turn counts.
let apiKey: string
const h = useHarness()
beforeAll(async () => {
  const created = await h.web.request('/api/keys', json({ name: 'round trips' }, { cookie: h.users.admin.cookie }))
  apiKey = ((await created.json()) as { key: string }).key
})

const embedded = () => h.stores.startsWith('pglite')
const get = (path: string, cookie: string) => () => h.web.request(path, { headers: { cookie } })
const pick = ({ status, db, kv }: { status: number; db: number; kv: number }) => ({ status, db, kv })

describe('signed-in reads', () => {
  it('a session read costs one database round trip the first time, then none: one kv read of the revocation stamp', async () => {
    const { alice } = h.users
    expect(pick(await cost(h, get('/api/auth/session', alice.cookie)))).toEqual({ status: 200, db: 1, kv: 0 })
    expect(pick(await cost(h, get('/api/auth/session', alice.cookie)))).toEqual({ status: 200, db: 0, kv: 1 })
  })

  it('the keys list is one database round trip with the session cached, two without', async () => {
    const { bob } = h.users
    expect(pick(await cost(h, get('/api/keys', bob.cookie)))).toEqual({ status: 200, db: 2, kv: 0 })
    const warm = await cost(h, get('/api/keys', bob.cookie))
    expect(pick(warm)).toEqual({ status: 200, db: 1, kv: 1 })
    // The settings and the query: one transaction embedded (BEGIN, settings, select, COMMIT), one batch on Neon.
    expect(warm.statements).toBe(embedded() ? 4 : 2)
  })

  it('an unknown session costs one lookup and no kv', async () => {
    expect(pick(await cost(h, get('/api/keys', 'service-session=' + 'ab'.repeat(32))))).toEqual({ status: 401, db: 1, kv: 0 })
  })
})

describe('key requests and sign-in', () => {
  it('an API-key request (backend validate-key): one lookup-and-touch transaction and the rate limit', async () => {
    const res = await cost(h, () => h.backend.request('/api/validate-key', { method: 'POST', headers: { authorization: `Bearer ${apiKey}` } }))
    // The touch and the lookup go as one batch (one transaction embedded).
    expect(pick(res)).toEqual({ status: 200, db: 1, kv: 1 })
  })

  it('a password sign-in: the limiter, the user lookup, the session insert (CSRF token not counted)', async () => {
    const { bob } = h.users
    const res = await cost(h, () => login(h, bob.email, PASSWORD, '203.0.113.9'))
    // The lookup, then (after bcrypt) the expired-session sweep and the insert as one batch.
    expect(pick(res)).toEqual({ status: 200, db: 2, kv: 1 })
  })
})

describe('the session cache keeps revocation immediate', () => {
  it('two clients: a password change on one makes the other\'s very next request 401', async () => {
    const carol = await h.seedUser('Carol', `carol-${crypto.randomUUID().slice(0, 8)}@example.com`)
    const second = await login(h, carol.email, PASSWORD, '203.0.113.20')
    const otherDevice = second.headers.get('set-cookie')!.split(';')[0]
    // Both clients are cached: their next reads cost no database round trip.
    for (const cookie of [carol.cookie, otherDevice]) {
      await h.web.request('/api/keys', { headers: { cookie } })
      expect(pick(await cost(h, get('/api/auth/session', cookie)))).toEqual({ status: 200, db: 0, kv: 1 })
    }
    const changed = await h.web.request('/api/user/password', json({ currentPassword: PASSWORD, newPassword: 'a brand new passphrase 42' }, { cookie: carol.cookie }))
    expect(changed.status).toBe(200)
    expect((await h.web.request('/api/keys', { headers: { cookie: otherDevice } })).status).toBe(401)
    expect((await h.web.request('/api/keys', { headers: { cookie: carol.cookie } })).status).toBe(200) // the changing client stays in
  })

  it('sign-out ends the session for its very next request, cached or not', async () => {
    const dave = await h.seedUser('Dave', `dave-${crypto.randomUUID().slice(0, 8)}@example.com`)
    await h.web.request('/api/keys', { headers: { cookie: dave.cookie } })
    const out = await h.web.request('/api/auth/signout', { method: 'POST', headers: { ...BROWSER, cookie: dave.cookie } })
    expect(out.status).toBeLessThan(300)
    expect((await h.web.request('/api/keys', { headers: { cookie: dave.cookie } })).status).toBe(401)
  })

  it('a name change shows on the next session read', async () => {
    const erin = await h.seedUser('Erin', `erin-${crypto.randomUUID().slice(0, 8)}@example.com`)
    await h.web.request('/api/auth/session', { headers: { cookie: erin.cookie } })
    const renamed = await h.web.request('/api/user', { ...json({ name: 'Erin Renamed' }, { cookie: erin.cookie }), method: 'PATCH' })
    expect(renamed.status).toBe(200)
    const session = (await (await h.web.request('/api/auth/session', { headers: { cookie: erin.cookie } })).json()) as { user: { name: string } }
    expect(session.user.name).toBe('Erin Renamed')
  })
})
