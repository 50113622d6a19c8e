import { and, eq, sql } from 'drizzle-orm'
import { describe, expect, it, vi } from 'vitest'
import { createBackendApp } from '../../../functions/backend/app'
import { signedIdentityHeaders } from '../../../lib/auth/identity'
import type { Services } from '../../../lib/context'
import type { Db } from '../../../lib/db/rls'
import { installations } from '../../../schema'
import { insertApiKey } from '../../auth/helpers'
import { useHarness } from '../../support/harness'
import { backendCall } from '../../support/requests'

/** Installation registration, happy paths and errors. Security cases are in installations-security.test.ts. */
const HMAC = 'test-hmac'
const INTERNAL = 'test-internal'
type Who = { id: string; email: string }

const h = useHarness({ env: { HMAC_SECRET: HMAC, INTERNAL_API_KEY: INTERNAL } })

const signed = (u: Who, role = 'user') => signedIdentityHeaders(HMAC, { userId: u.id, email: u.email, role })
const call = (method: string, path: string, opts: Parameters<typeof backendCall>[3] = {}, app = h.backend) => backendCall(app, method, path, opts)
const rowsOf = (userId: string) => h.db.select().from(installations).where(eq(installations.userId, userId)).orderBy(installations.mode)
const rowOf = async (userId: string, mode: string) =>
  (await h.db.select().from(installations).where(and(eq(installations.userId, userId), eq(installations.mode, mode))))[0]
const backdate = (userId: string, minutes: number, mode?: string) =>
  h.db
    .update(installations)
    .set({ lastSeen: sql`now() - make_interval(mins => ${minutes})` })
    .where(mode ? and(eq(installations.userId, userId), eq(installations.mode, mode)) : eq(installations.userId, userId))
const list = async (headers: Record<string, string>) => {
  const res = await call('GET', '/api/installations', { headers })
  expect(res.status).toBe(200)
  return res.json()
}
const DASHBOARD = 'http://localhost:3000/dashboard'

describe('backend installations: happy paths', () => {
  it('register-home with a signed identity stores an active home installation and answers the dashboard URL', async () => {
    const { alice } = h.users
    const res = await call('POST', '/api/register-home', { headers: await signed(alice), body: { userId: alice.id, gatewayToken: 'gw-1' } })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ success: true, message: 'Home installation registered', dashboardUrl: DASHBOARD })
    expect(res.headers.get('ratelimit-limit')).toBe('120')
    const row = await rowOf(alice.id, 'home')
    expect(row).toMatchObject({ userId: alice.id, mode: 'home', gatewayToken: 'gw-1', status: 'active' })
    expect(Date.now() - row.lastSeen.getTime()).toBeLessThan(60_000)
  })

  it('register-home accepts mode cloud; register-link always stores link (a mode in its body is ignored)', async () => {
    const carol = await h.seedUser('Carol', `carol-${crypto.randomUUID().slice(0, 6)}@example.com`)
    const cloud = await call('POST', '/api/register-home', { headers: await signed(carol), body: { userId: carol.id, mode: 'cloud' } })
    expect(cloud.status).toBe(200)
    expect((await cloud.json()).message).toBe('Cloud installation registered')
    const link = await call('POST', '/api/register-link', { headers: await signed(carol), body: { userId: carol.id, mode: 'home', gatewayToken: 'rt' } })
    expect(link.status).toBe(200)
    expect(await link.json()).toEqual({ success: true, message: 'Link installation registered', dashboardUrl: DASHBOARD })
    expect((await rowsOf(carol.id)).map((r) => [r.mode, r.gatewayToken])).toEqual([
      ['cloud', null],
      ['link', 'rt'],
    ])
  })

  it('registering again keeps registered_at, refreshes last_seen, status and the token; no token keeps the old one', async () => {
    const dave = await h.seedUser('Dave', `dave-${crypto.randomUUID().slice(0, 6)}@example.com`)
    const headers = await signed(dave)
    await call('POST', '/api/register-link', { headers, body: { userId: dave.id, gatewayToken: 'old' } })
    await h.db
      .update(installations)
      .set({ registeredAt: new Date('2024-01-01T00:00:00Z'), lastSeen: new Date('2024-01-02T00:00:00Z'), status: 'inactive' })
      .where(eq(installations.userId, dave.id))
    expect((await call('POST', '/api/register-link', { headers, body: { userId: dave.id, gatewayToken: 'new' } })).status).toBe(200)
    let row = await rowOf(dave.id, 'link')
    expect(row.registeredAt.toISOString()).toBe('2024-01-01T00:00:00.000Z')
    expect(Date.now() - row.lastSeen.getTime()).toBeLessThan(60_000)
    expect(row).toMatchObject({ gatewayToken: 'new', status: 'active' })
    expect((await call('POST', '/api/register-link', { headers, body: { userId: dave.id } })).status).toBe(200)
    row = await rowOf(dave.id, 'link')
    expect(row.gatewayToken).toBe('new')
    expect(await rowsOf(dave.id)).toHaveLength(1) // one row per user and mode
  })

  it("lists only the caller's installations, with the spec's snake_case fields and no gateway token", async () => {
    const erin = await h.seedUser('Erin', `erin-${crypto.randomUUID().slice(0, 6)}@example.com`)
    const headers = await signed(erin)
    await call('POST', '/api/register-home', { headers, body: { userId: erin.id, gatewayToken: 'secret-home' } })
    await call('POST', '/api/register-link', { headers, body: { userId: erin.id, gatewayToken: 'secret-link' } })
    await call('POST', '/api/register-home', { headers: await signed(h.users.bob), body: { userId: h.users.bob.id } })
    const res = await call('GET', '/api/installations', { headers })
    expect(res.status).toBe(200)
    const text = await res.text()
    expect(text).not.toContain('secret-')
    const body = JSON.parse(text)
    expect(body).toMatchObject({ success: true, count: 2 })
    expect(body.installations.map((i: { mode: string }) => i.mode).sort()).toEqual(['home', 'link'])
    for (const i of body.installations) {
      expect(Object.keys(i).sort()).toEqual(['last_seen', 'mode', 'registered_at', 'status', 'user_id'])
      expect(i).toMatchObject({ user_id: erin.id, status: 'active' })
      expect(new Date(i.last_seen).toISOString()).toBe(i.last_seen)
      expect(new Date(i.registered_at).toISOString()).toBe(i.registered_at)
    }
    expect(await list(await signed({ id: 'nobody-yet', email: 'nobody@example.com' }))).toEqual({ success: true, count: 0, installations: [] })
  })

  it('reads inactive after 10 minutes unseen (derived at read time: the stored status stays active)', async () => {
    const fay = await h.seedUser('Fay', `fay-${crypto.randomUUID().slice(0, 6)}@example.com`)
    const headers = await signed(fay)
    await call('POST', '/api/register-home', { headers, body: { userId: fay.id } })
    await call('POST', '/api/register-link', { headers, body: { userId: fay.id } })
    await backdate(fay.id, 11, 'link')
    await backdate(fay.id, 9, 'home')
    const byMode = Object.fromEntries((await list(headers)).installations.map((i: { mode: string; status: string }) => [i.mode, i.status]))
    expect(byMode).toEqual({ home: 'active', link: 'inactive' })
    expect((await rowOf(fay.id, 'link')).status).toBe('active')
  })

  it('a heartbeat reactivates: last_seen now, status active, for every installation of the caller', async () => {
    const gus = await h.seedUser('Gus', `gus-${crypto.randomUUID().slice(0, 6)}@example.com`)
    const headers = await signed(gus)
    await call('POST', '/api/register-home', { headers, body: { userId: gus.id } })
    await call('POST', '/api/register-link', { headers, body: { userId: gus.id } })
    await backdate(gus.id, 30)
    await h.db.update(installations).set({ status: 'inactive' }).where(eq(installations.userId, gus.id))
    expect((await list(headers)).installations.every((i: { status: string }) => i.status === 'inactive')).toBe(true)

    const before = Date.now()
    const res = await call('POST', '/api/heartbeat', { headers, body: { userId: gus.id } })
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(Object.keys(body).sort()).toEqual(['success', 'timestamp'])
    expect(body.success).toBe(true)
    expect(new Date(body.timestamp).getTime()).toBeGreaterThanOrEqual(before - 1000)
    expect((await list(headers)).installations.every((i: { status: string }) => i.status === 'active')).toBe(true)
    for (const row of await rowsOf(gus.id)) {
      expect(row.status).toBe('active')
      expect(Date.now() - row.lastSeen.getTime()).toBeLessThan(60_000)
    }
    // No body at all: the caller's own installations.
    await backdate(gus.id, 30)
    expect((await call('POST', '/api/heartbeat', { headers })).status).toBe(200)
    expect((await list(headers)).installations.every((i: { status: string }) => i.status === 'active')).toBe(true)
  })

  it("registration token (shared key): the most recently seen installation's token, or null", async () => {
    const hal = await h.seedUser('Hal', `hal-${crypto.randomUUID().slice(0, 6)}@example.com`)
    const headers = await signed(hal)
    const token = (userId: string) =>
      call('GET', `/api/registration/token?userId=${encodeURIComponent(userId)}`, { headers: { authorization: `Bearer ${INTERNAL}` } })
    let res = await token(hal.id)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ gateway_token: null })

    await call('POST', '/api/register-home', { headers, body: { userId: hal.id, gatewayToken: 'home-token' } })
    await call('POST', '/api/register-link', { headers, body: { userId: hal.id, gatewayToken: 'link-token' } })
    await backdate(hal.id, 5, 'home')
    res = await token(hal.id)
    expect(await res.json()).toEqual({ gateway_token: 'link-token' })
    expect(res.headers.get('cache-control')).toBe('no-store')
    await backdate(hal.id, 20, 'link')
    expect(await (await token(hal.id)).json()).toEqual({ gateway_token: 'home-token' })
    expect(await (await token('no-such-user')).json()).toEqual({ gateway_token: null })
  })

  it("a user's API key (Bearer sk_...) works for register, installations and heartbeat", async () => {
    const ivy = await h.seedUser('Ivy', `ivy-${crypto.randomUUID().slice(0, 6)}@example.com`)
    const { key } = await insertApiKey(h.db, ivy.id)
    const auth = { authorization: `Bearer ${key}` }
    const reg = await call('POST', '/api/register-home', { headers: auth, body: { userId: ivy.id, gatewayToken: 'from-script' } })
    expect(reg.status).toBe(200)
    expect(await reg.json()).toEqual({ success: true, message: 'Home installation registered', dashboardUrl: DASHBOARD })
    expect((await call('POST', '/api/register-link', { headers: auth, body: { userId: ivy.id } })).status).toBe(200)
    const listed = await list(auth)
    expect(listed.count).toBe(2)
    expect(listed.installations.every((i: { user_id: string }) => i.user_id === ivy.id)).toBe(true)
    await backdate(ivy.id, 30)
    expect((await call('POST', '/api/heartbeat', { headers: auth })).status).toBe(200)
    expect((await list(auth)).installations.every((i: { status: string }) => i.status === 'active')).toBe(true)
  })

  it('the routes are in the backend OpenAPI document, with their auth documented', async () => {
    const doc = await (await h.backend.request('/openapi.json')).json()
    for (const [path, method] of [
      ['/install', 'get'],
      ['/link', 'get'],
      ['/api/register-home', 'post'],
      ['/api/register-link', 'post'],
      ['/api/installations', 'get'],
      ['/api/registration/token', 'get'],
      ['/api/heartbeat', 'post'],
    ]) {
      expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined()
    }
    const register = doc.paths['/api/register-home'].post
    expect(register.security).toEqual([{ apiKey: [] }, { identityHeaders: [] }])
    expect(register.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['x-user-id', 'x-user-signature']))
    expect(Object.keys(register.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '403', '404', '500']))
    expect(doc.paths['/api/registration/token'].get.security).toEqual([{ sharedKey: [] }])
    expect(doc.paths['/install'].get.responses['200'].content['text/plain']).toBeDefined()
    expect(doc.components.schemas.Installation.properties.status.enum).toEqual(['active', 'inactive'])
  })
})

describe('backend installations: errors', () => {
  const alice = () => h.users.alice

  it('userId missing, empty or blank is 400 "userId required" on both register routes', async () => {
    for (const path of ['/api/register-home', '/api/register-link']) {
      for (const body of [{}, { userId: '' }, { userId: '   ' }, { userId: null }, { gatewayToken: 'x' }]) {
        const res = await call('POST', path, { headers: await signed(alice()), body })
        expect(res.status, `${path} ${JSON.stringify(body)}`).toBe(400)
        expect(await res.json()).toMatchObject({ error: 'userId required', code: 'VALIDATION' })
      }
    }
    expect(await rowsOf(alice().id)).not.toContainEqual(expect.objectContaining({ mode: 'link' }))
  })

  it('wrong types, a bad mode, a non-object body: 400', async () => {
    const cases: [string, unknown, string][] = [
      ['/api/register-home', { userId: 42 }, 'userId must be a string'],
      ['/api/register-home', { userId: alice().id, mode: 'link' }, 'mode must be home or cloud'],
      ['/api/register-home', { userId: alice().id, mode: 'space' }, 'mode must be home or cloud'],
      ['/api/register-home', { userId: alice().id, gatewayToken: 7 }, 'gatewayToken must be a string'],
      ['/api/register-link', { userId: alice().id, gatewayToken: '' }, 'gatewayToken must not be empty'],
      ['/api/register-link', { userId: alice().id, gatewayToken: 'x'.repeat(1025) }, 'gatewayToken must be at most 1024 characters'],
      ['/api/register-home', [alice().id], 'Request body must be a JSON object'],
      ['/api/register-link', 'null', 'Request body must be a JSON object'],
    ]
    for (const [path, body, error] of cases) {
      const res = await call('POST', path, { headers: await signed(alice()), body })
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(await res.json()).toMatchObject({ error, code: 'VALIDATION' })
    }
  })

  it('malformed JSON is 400 "Invalid JSON body"; another Content-Type is 415', async () => {
    for (const path of ['/api/register-home', '/api/register-link']) {
      const res = await call('POST', path, { headers: await signed(alice()), body: '{"userId": ' })
      expect(res.status).toBe(400)
      expect(await res.json()).toEqual({ error: 'Invalid JSON body', code: 'INVALID_JSON' })
    }
    const form = await call('POST', '/api/register-home', {
      headers: { ...(await signed(alice())), 'content-type': 'application/x-www-form-urlencoded' },
      body: `userId=${alice().id}`,
    })
    expect(form.status).toBe(415)
  })

  it('registering a user that does not exist is 404 "User not found"', async () => {
    const ghost = { id: 'ghost-user', email: 'ghost@example.com' }
    const self = await call('POST', '/api/register-home', { headers: await signed(ghost), body: { userId: ghost.id } })
    expect(self.status).toBe(404)
    expect(await self.json()).toEqual({ error: 'User not found', code: 'USER_NOT_FOUND' })
    const byAdmin = await call('POST', '/api/register-link', { headers: await signed(h.users.admin), body: { userId: 'no-such-user' } })
    expect(byAdmin.status).toBe(404)
    expect(await rowsOf('ghost-user')).toEqual([])
  })

  it('registration token without userId (or empty) is 400 "userId required"', async () => {
    for (const q of ['', '?userId=', '?userId=%20', '?user=abc']) {
      const res = await call('GET', `/api/registration/token${q}`, { headers: { authorization: `Bearer ${INTERNAL}` } })
      expect(res.status, q).toBe(400)
      expect(await res.json()).toMatchObject({ error: 'userId required' })
    }
  })

  it('the heartbeat takes any body: malformed JSON, a non-object, a numeric userId all answer 200', async () => {
    for (const body of ['{not json', '[]', 'null', JSON.stringify({ userId: 5 }), 'userId=abc']) {
      const res = await call('POST', '/api/heartbeat', { headers: await signed(alice()), body })
      expect(res.status, body).toBe(200)
      expect((await res.json()).success).toBe(true)
    }
  })

  it('a failing store is 500 "Internal server error" for register and list, but the heartbeat still answers 200', async () => {
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {})
    const failing = {
      select: () => {
        throw new Error('connect ECONNREFUSED 10.0.0.1:5432')
      },
      transaction: () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.1:5432')),
    } as unknown as Db
    const broken = createBackendApp((): Services => ({ ...h.services, db: failing }))
    const headers = await signed(alice())
    for (const [method, path, body] of [
      ['POST', '/api/register-home', { userId: alice().id }],
      ['GET', '/api/installations', undefined],
    ] as const) {
      const res = await call(method, path, { headers, body }, broken)
      expect(res.status).toBe(500)
      expect(await res.json()).toEqual({ error: 'Internal server error', code: 'INTERNAL' })
    }
    const token = await call('GET', `/api/registration/token?userId=${alice().id}`, { headers: { authorization: `Bearer ${INTERNAL}` } }, broken)
    expect(token.status).toBe(500)
    const beat = await call('POST', '/api/heartbeat', { headers }, broken)
    expect(beat.status).toBe(200)
    expect((await beat.json()).success).toBe(true)
    expect(spy).toHaveBeenCalled()
    spy.mockRestore()
  })

  it('wrong methods on known paths are 405 with Allow', async () => {
    const getRegister = await call('GET', '/api/register-home')
    expect(getRegister.status).toBe(405)
    expect(getRegister.headers.get('allow')).toBe('POST')
    expect(await getRegister.json()).toEqual({ error: 'Method not allowed', code: 'METHOD_NOT_ALLOWED' })
    expect((await call('GET', '/api/heartbeat')).status).toBe(405)
    const postList = await call('POST', '/api/installations', { headers: await signed(alice()), body: {} })
    expect(postList.status).toBe(405)
    expect(postList.headers.get('allow')).toBe('GET, HEAD')
  })
})
