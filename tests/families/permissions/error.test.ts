import { describe, expect, it } from 'vitest'
import { permissionRequests } from '../../../schema'
import type { Harness } from '../../support/harness'
import { call, withinOneWindow } from '../../support/requests'
import { dangerousCall, hook, permissionsHarness, poll, storedRequest } from './helpers'
import { useFixture } from '../../support/harness'

const h = useFixture(() => permissionsHarness())

const requestCount = async () => (await h.db.select().from(permissionRequests)).length

describe('permissions: hook errors', () => {
  it('400 `toolName required`: missing, not a string, empty', async () => {
    for (const body of [{}, { toolName: 42 }, { toolName: '' }, { toolName: null, toolInput: {} }]) {
      const res = await hook(h, body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(await res.json()).toMatchObject({ error: 'toolName required', code: 'VALIDATION' })
    }
  })

  it('400 for a toolInput that is not an object, nests too deep, or fields over their length; nothing recorded', async () => {
    const before = await requestCount()
    let deep: Record<string, unknown> = {}
    for (let i = 0; i < 40; i++) deep = { deep }
    const cases: Array<[unknown, string]> = [
      [{ toolName: 'frobnicate', toolInput: [1, 2] }, 'toolInput must be an object'],
      [{ toolName: 'frobnicate', toolInput: 'rm -rf /' }, 'toolInput must be an object'],
      [{ toolName: 'frobnicate', toolInput: deep }, 'toolInput may nest at most 32 levels'],
      [{ toolName: 'x'.repeat(201) }, 'toolName must be at most 200 characters'],
      [{ toolName: 'frobnicate', agentId: 'a'.repeat(201) }, 'agentId must be at most 200 characters'],
      [{ toolName: 'frobnicate', userId: 7 }, 'userId must be a string'],
      [{ toolName: 'frobnicate', toolInput: { text: 'nul \u0000 here' } }, 'Text must not contain NUL or unpaired surrogate characters'],
    ]
    for (const [body, error] of cases) {
      const res = await hook(h, body)
      expect(res.status, error).toBe(400)
      expect(await res.json()).toMatchObject({ error, code: 'VALIDATION' })
    }
    expect(await requestCount()).toBe(before)
  })

  it('400 `Invalid JSON body` for malformed JSON', async () => {
    const res = await hook(h, '{"toolName": ')
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({ error: 'Invalid JSON body', code: 'INVALID_JSON' })
  })

  it('poll: 404 for an unknown request', async () => {
    const res = await poll(h, 'no-such-request')
    expect(res.status).toBe(404)
    expect(await res.json()).toEqual({ error: 'Permission request not found', code: 'NOT_FOUND' })
  })
})

describe('permissions: decision errors', () => {
  it('a second decision is 409 `ALREADY_DECIDED` with the standing status; the first stands', async () => {
    const alice = h.users.alice
    const requestId = await dangerousCall(h, alice.id)
    expect((await call(h, 'POST', `/api/permissions/${requestId}`, { user: alice, body: { decision: 'deny' } })).status).toBe(200)
    for (const decision of ['approve', 'deny']) {
      const again = await call(h, 'POST', `/api/permissions/${requestId}`, { user: alice, body: { decision } })
      expect(again.status).toBe(409)
      expect(await again.json()).toEqual({ error: 'Permission request already decided', code: 'ALREADY_DECIDED', status: 'denied' })
    }
    expect((await storedRequest(h, requestId)).status).toBe('denied')
  })

  it('two decisions at once: exactly one applies', async () => {
    const alice = h.users.alice
    const requestId = await dangerousCall(h, alice.id)
    const answers = await Promise.all(
      (['approve', 'deny', 'approve', 'deny'] as const).map((decision) => call(h, 'POST', `/api/permissions/${requestId}`, { user: alice, body: { decision } })),
    )
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409, 409, 409])
  })

  it('404 for an unknown id', async () => {
    const res = await call(h, 'POST', '/api/permissions/no-such-request', { user: h.users.alice, body: { decision: 'approve' } })
    expect(res.status).toBe(404)
    expect(await res.json()).toEqual({ error: 'Permission request not found', code: 'NOT_FOUND' })
  })

  it('400 for a missing or unknown decision, and for invalid JSON; the request stays pending', async () => {
    const alice = h.users.alice
    const requestId = await dangerousCall(h, alice.id)
    for (const body of [{}, { decision: 'maybe' }, { decision: 'APPROVE' }]) {
      const res = await call(h, 'POST', `/api/permissions/${requestId}`, { user: alice, body })
      expect(res.status).toBe(400)
      expect(await res.json()).toMatchObject({ error: 'decision must be approve or deny', code: 'VALIDATION' })
    }
    const bad = await call(h, 'POST', `/api/permissions/${requestId}`, { user: alice, body: '{"decision"' })
    expect(bad.status).toBe(400)
    expect(await bad.json()).toEqual({ error: 'Invalid JSON body', code: 'INVALID_JSON' })
    expect((await storedRequest(h, requestId)).status).toBe('pending')
  })
})

describe('permissions: socket errors (no listener)', () => {
  it('426 `Upgrade Required` with `Upgrade: websocket` for a plain GET', async () => {
    const res = await call(h, 'GET', '/api/permissions/socket', { user: h.users.alice })
    expect(res.status).toBe(426)
    expect(res.headers.get('upgrade')).toBe('websocket')
    expect(await res.json()).toEqual({ error: 'Upgrade Required', code: 'UPGRADE_REQUIRED' })
  })

  it('503 `Permission socket not available` where nothing accepts WebSockets (the app called without a listener)', async () => {
    const res = await call(h, 'GET', '/api/permissions/socket', { user: h.users.alice, headers: { upgrade: 'websocket', connection: 'Upgrade' } })
    expect(res.status).toBe(503)
    expect(await res.json()).toEqual({ error: 'Permission socket not available', code: 'NOT_CONFIGURED' })
  })
})

describe('permissions: rate limit', () => {
  it('120 requests a minute per user across the permissions routes, then 429 with Retry-After', async () => {
    await withinOneWindow(60)
    const user = await h.seedUser('Busy', `busy-${crypto.randomUUID()}@example.com`)
    for (let i = 0; i < 120; i++) {
      const res = await call(h, 'GET', '/api/permissions', { user })
      expect(res.status).toBe(200)
    }
    const refused = await call(h, 'POST', '/api/permissions/any', { user, body: { decision: 'approve' } })
    expect(refused.status).toBe(429)
    expect(await refused.json()).toEqual({ error: 'Too many requests', code: 'RATE_LIMITED' })
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    // Another user is not held back.
    expect((await call(h, 'GET', '/api/permissions', { user: h.users.bob })).status).toBe(200)
  })
})
