import { beforeAll, describe, expect, it } from 'vitest'
import { createWebApp } from '../../../functions/web'
import type { Harness } from '../../support/harness'
import { call, FORBIDDEN_ORIGIN } from '../../support/requests'
import { seedAgent } from '../instance/helpers'
import { dangerousCall, hook, INTERNAL_KEY, permissionsHarness, poll, storedRequest } from './helpers'
import { useFixture } from '../../support/harness'

/** The same deployment without `INTERNAL_API_KEY`: the web app on the harness's stores, its config lacking the key. */
let keyless: Pick<Harness, 'web'>
const h = useFixture(() => permissionsHarness())
beforeAll(async () => {
  keyless = { web: createWebApp(() => ({ ...h.services, config: { ...h.services.config, INTERNAL_API_KEY: undefined } })) }
})

const UNAUTHORIZED = { error: 'Unauthorized', code: 'UNAUTHORIZED' }

describe('permissions: the hook routes need the internal key', () => {
  it('401 without a key, with a wrong key, another scheme or a session cookie; nothing recorded', async () => {
    const body = { toolName: 'frobnicate', userId: h.users.alice.id }
    const attempts: Array<Record<string, string>> = [
      {},
      { authorization: 'Bearer wrong-key' },
      { authorization: `Bearer ${INTERNAL_KEY}x` },
      { authorization: `Basic ${btoa(`x:${INTERNAL_KEY}`)}` },
      { authorization: INTERNAL_KEY },
      { cookie: h.users.alice.cookie },
    ]
    for (const headers of attempts) {
      const res = await h.web.request('/api/hooks/classify', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
      expect(res.status, JSON.stringify(headers)).toBe(401)
      expect(await res.json()).toEqual(UNAUTHORIZED)
    }
    const listed = (await (await call(h, 'GET', '/api/permissions', { user: h.users.alice })).json()) as { requests: unknown[] }
    expect(listed.requests).toEqual([])
  })

  it('the key is checked before the body: no key and a malformed body is 401, not 400', async () => {
    const res = await hook(h, {}, null)
    expect(res.status).toBe(401)
  })

  it('the scheme is case-insensitive (RFC 7235)', async () => {
    const res = await h.web.request('/api/hooks/classify', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `bearer ${INTERNAL_KEY}` },
      body: JSON.stringify({ toolName: 'read' }),
    })
    expect(res.status).toBe(200)
  })

  it('poll: 401 without or with a wrong key, even for a real request', async () => {
    const requestId = await dangerousCall(h, h.users.alice.id)
    for (const key of [null, 'wrong-key']) {
      const res = await poll(h, requestId, key)
      expect(res.status).toBe(401)
      expect(await res.json()).toEqual(UNAUTHORIZED)
    }
    const withCookie = await h.web.request(`/api/hooks/permissions/${requestId}`, { headers: { cookie: h.users.alice.cookie } })
    expect(withCookie.status).toBe(401)
  })

  it('a deployment without INTERNAL_API_KEY answers 503 `Internal API key not configured` to any caller, key or not', async () => {
    for (const key of [null, INTERNAL_KEY, '']) {
      for (const res of [await hook(keyless, { toolName: 'read' }, key), await poll(keyless, 'any', key)]) {
        expect(res.status).toBe(503)
        expect(await res.json()).toEqual({ error: 'Internal API key not configured', code: 'NOT_CONFIGURED' })
      }
    }
  })
})

// Every session route without a session or with a forged cookie: tests/families/common-route-checks.test.ts.
describe('permissions: the session routes', () => {
  it("another user's request: not listed, and deciding it is 404 (as an unknown id); it stays pending", async () => {
    const { alice, bob } = h.users
    const bobs = await dangerousCall(h, bob.id)
    const listed = (await (await call(h, 'GET', '/api/permissions', { user: alice })).json()) as { requests: Array<{ requestId: string }> }
    expect(listed.requests.some((r) => r.requestId === bobs)).toBe(false)
    for (const decision of ['approve', 'deny']) {
      const res = await call(h, 'POST', `/api/permissions/${bobs}`, { user: alice, body: { decision } })
      expect(res.status).toBe(404)
      expect(await res.json()).toEqual({ error: 'Permission request not found', code: 'NOT_FOUND' })
    }
    expect(await (await poll(h, bobs)).json()).toMatchObject({ status: 'pending' })
    // Its owner still can.
    expect((await call(h, 'POST', `/api/permissions/${bobs}`, { user: bob, body: { decision: 'approve' } })).status).toBe(200)
  })

  it('an ownerless request (no user, no agent named) is nobody’s: no one lists or decides it', async () => {
    const res = await hook(h, { toolName: 'frobnicate', agentId: 'not-an-agent', userId: 'not-a-user' })
    const { requestId } = (await res.json()) as { requestId: string }
    expect((await storedRequest(h, requestId)).userId).toBeNull()
    for (const user of [h.users.alice, h.users.bob, h.users.admin]) {
      const decided = await call(h, 'POST', `/api/permissions/${requestId}`, { user, body: { decision: 'approve' } })
      expect(decided.status).toBe(404)
    }
    expect(await (await poll(h, requestId)).json()).toMatchObject({ status: 'pending' })
  })

  it('a request for Bob’s agent that names Alice as the user is Bob’s: Alice neither lists nor decides it', async () => {
    const { alice, bob } = h.users
    const bobsAgent = await seedAgent(h, bob)
    const requestId = await dangerousCall(h, alice.id, { agentId: bobsAgent.id, toolInput: { secret: 'bobs-tool-input' } })
    const listed = (await (await call(h, 'GET', '/api/permissions', { user: alice })).json()) as { requests: Array<{ requestId: string }> }
    expect(listed.requests.map((r) => r.requestId)).not.toContain(requestId)
    expect((await call(h, 'POST', `/api/permissions/${requestId}`, { user: alice, body: { decision: 'approve' } })).status).toBe(404)
    expect((await call(h, 'POST', `/api/permissions/${requestId}`, { user: bob, body: { decision: 'deny' } })).status).toBe(200)
  })

  it('a decision from a foreign Origin is 403; the socket refuses a foreign Origin even on GET', async () => {
    const alice = h.users.alice
    const requestId = await dangerousCall(h, alice.id)
    const foreign = { origin: 'https://evil.example' }
    const decided = await call(h, 'POST', `/api/permissions/${requestId}`, { user: alice, headers: foreign, body: { decision: 'approve' } })
    expect(decided.status).toBe(403)
    expect(await decided.json()).toEqual(FORBIDDEN_ORIGIN)
    const socket = await call(h, 'GET', '/api/permissions/socket', { user: alice, headers: { ...foreign, upgrade: 'websocket' } })
    expect(socket.status).toBe(403)
    expect((await storedRequest(h, requestId)).status).toBe('pending')
  })

  it('the internal key is no session: it opens none of the session routes', async () => {
    const res = await h.web.request('/api/permissions', { headers: { authorization: `Bearer ${INTERNAL_KEY}` } })
    expect(res.status).toBe(401)
  })
})
