import { describe, expect, it, vi } from 'vitest'
import { createWebApp } from '../../functions/web'
import { SESSION_CACHE_TTL_MS, SessionCache } from '../../lib/auth/session-cache'
import type { Services } from '../../lib/context'
import { json, login } from '../families/auth/flow'
import { BROWSER, PASSWORD, useHarness } from '../support/harness'
import { cost } from '../support/round-trips'

const h = useHarness()

const user = { id: 'u1', email: 'a@example.com', name: 'A', isAdmin: false, expiresAt: new Date(Date.now() + 3_600_000) }

describe('SessionCache', () => {
  it('keeps an entry for at most SESSION_CACHE_TTL_MS, and never past the session\'s expiry', () => {
    let now = Date.now()
    const cache = new SessionCache(() => now)
    cache.store('t1', user, now)
    cache.store('t2', { ...user, expiresAt: new Date(now + 1000) }, now)
    now += 1001
    expect(cache.fresh('t1')?.user.id).toBe('u1')
    expect(cache.fresh('t2')).toBeUndefined()
    now += SESSION_CACHE_TTL_MS
    expect(cache.fresh('t1')).toBeUndefined()
  })

  it('forgets every entry of a user at once', () => {
    const cache = new SessionCache()
    cache.store('t1', user, Date.now())
    cache.store('t2', user, Date.now())
    cache.store('t3', { ...user, id: 'u2' }, Date.now())
    cache.forgetUser('u1')
    expect([cache.fresh('t1'), cache.fresh('t2'), cache.fresh('t3')?.user.id]).toEqual([undefined, undefined, 'u2'])
  })
})

/** The web app over the harness's stores with its own session cache: another Worker isolate. */
function isolate(overrides: PropertyDescriptorMap = {}) {
  const services = Object.create(h.services, { sessionCache: { value: new SessionCache() }, ...overrides }) as Services
  return createWebApp(() => services)
}

describe('revocation reaches every isolate at once', () => {
  it('a password change in one isolate makes the other device\'s very next request, cached in another isolate, 401', async () => {
    const grace = await h.seedUser('Grace', `grace-${crypto.randomUUID().slice(0, 8)}@example.com`)
    const [a, b] = [isolate(), isolate()]
    const otherDevice = (await login(h, grace.email, PASSWORD, '203.0.113.31')).headers.get('set-cookie')!.split(';')[0]
    // Isolate B has the other device's session cached: its reads cost no query.
    expect((await b.request('/api/keys', { headers: { cookie: otherDevice } })).status).toBe(200)
    expect((await cost(h, () => b.request('/api/keys', { headers: { cookie: otherDevice } }))).db).toBe(1)
    const changed = await a.request('/api/user/password', json({ currentPassword: PASSWORD, newPassword: 'another new passphrase 7' }, { cookie: grace.cookie }))
    expect(changed.status).toBe(200)
    expect((await b.request('/api/keys', { headers: { cookie: otherDevice } })).status).toBe(401)
  })

  it('sign-out everywhere is seen by another isolate that had the session cached', async () => {
    const heidi = await h.seedUser('Heidi', `heidi-${crypto.randomUUID().slice(0, 8)}@example.com`)
    const [a, b] = [isolate(), isolate()]
    expect((await b.request('/api/auth/session', { headers: { cookie: heidi.cookie } })).status).toBe(200)
    const out = await a.request('/api/auth/signout', { method: 'POST', headers: { ...BROWSER, cookie: heidi.cookie } })
    expect(out.status).toBeLessThan(300)
    const after = (await (await b.request('/api/auth/session', { headers: { cookie: heidi.cookie } })).json()) as { user: unknown }
    expect(after.user).toBeNull()
  })
})

describe('when the kv store fails, the database decides', () => {
  /** The web app over the harness's stores, but a kv store whose every call throws, and its own cache. */
  function appWithBrokenKv() {
    const down = () => Promise.reject(new Error('kv down'))
    const kv = { get: down, set: down, take: down, del: down, limit: down }
    return isolate({ kv: { value: kv } })
  }

  it('an unreadable stamp means no cache: every read looks the session up', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    const app = appWithBrokenKv()
    const read = () => app.request('/api/auth/session', { headers: { cookie: h.users.alice.cookie } })
    expect((await cost(h, read)).db).toBe(1)
    const again = await cost(h, read)
    expect({ status: again.status, db: again.db }).toEqual({ status: 200, db: 1 })
    expect(warn.mock.calls.some(([line]) => String(line).includes('session.stamp_unreadable'))).toBe(true)
    warn.mockRestore()
  })

  it('a revocation with the kv store down still ends the session: the row is gone and the local copy forgotten', async () => {
    const spy = vi.spyOn(console, 'warn').mockImplementation(() => {})
    const err = vi.spyOn(console, 'error').mockImplementation(() => {})
    const frank = await h.seedUser('Frank', `frank-${crypto.randomUUID().slice(0, 8)}@example.com`)
    const app = appWithBrokenKv()
    expect((await app.request('/api/auth/session', { headers: { cookie: frank.cookie } })).status).toBe(200)
    const out = await app.request('/api/auth/signout', { method: 'POST', headers: { cookie: frank.cookie, origin: 'http://localhost:3000' } })
    expect(out.status).toBeLessThan(300)
    const after = (await (await app.request('/api/auth/session', { headers: { cookie: frank.cookie } })).json()) as { user: unknown }
    expect(after.user).toBeNull()
    spy.mockRestore()
    err.mockRestore()
  })
})
