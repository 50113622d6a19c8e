import { describe, expect, it } from 'vitest'
import { useHarness } from '../../support/harness'
import { call } from '../../support/requests'
import { act, type DeviceItem, deviceIn, lists, register, row } from './helpers'

const h = useHarness()

type Status = DeviceItem['status']
type Cell = { from: Status; action: string; to?: Status; error?: string }

// The spec's state table, every cell: allowed moves name `to`, every other cell its 400 message.
const TABLE: Cell[] = [
  { from: 'pending', action: 'approve', to: 'approved' },
  { from: 'pending', action: 'deny', to: 'denied' },
  { from: 'pending', action: 'revoke', error: 'Device is not approved' },
  { from: 'approved', action: 'approve', error: 'Device is not pending' },
  { from: 'approved', action: 'deny', error: 'Device is not pending' },
  { from: 'approved', action: 'revoke', to: 'revoked' },
  { from: 'denied', action: 'approve', error: 'Device is not pending' },
  { from: 'denied', action: 'deny', error: 'Device is not pending' },
  { from: 'denied', action: 'revoke', error: 'Device is not approved' },
  { from: 'revoked', action: 'approve', error: 'Device is not pending' },
  { from: 'revoked', action: 'deny', error: 'Device is not pending' },
  { from: 'revoked', action: 'revoke', error: 'Device is not approved' },
]

describe('devices: the state table, cell by cell', () => {
  it.each(TABLE)('$from + $action → $to$error', async ({ from, action, to, error }) => {
    const id = await deviceIn(h, h.users.alice, from)
    const before = await row(h, id)
    expect(before.status).toBe(from)
    const res = await act(h, h.users.alice, id, action)
    const after = await row(h, id)
    if (to) {
      expect(res.status).toBe(200)
      expect(after.status).toBe(to)
    } else {
      expect(res.status).toBe(400)
      expect(await res.json()).toEqual({ error, code: 'INVALID_DEVICE_STATE' })
      expect(after).toEqual(before) // status, lastSeen, everything unchanged
    }
  })

  it('the table covers 4 statuses × 3 actions', () => {
    expect(new Set(TABLE.map((c) => `${c.from}/${c.action}`)).size).toBe(12)
  })
})

describe('devices: request validation', () => {
  const post = (body: unknown) => call(h, 'POST', '/api/devices', { user: h.users.alice, body })
  async function expect400(res: Response, error: string) {
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ error, code: 'VALIDATION' })
  }

  it('missing deviceId or action → 400 `Missing deviceId or action`', async () => {
    const id = await deviceIn(h, h.users.alice, 'pending')
    for (const body of [{}, { deviceId: id }, { action: 'approve' }, { deviceId: '', action: 'approve' }, { deviceId: id, action: '' }, { deviceId: null, action: null }]) {
      await expect400(await post(body), 'Missing deviceId or action')
    }
    expect((await row(h, id)).status).toBe('pending')
  })

  it('an unknown action → 400 `Invalid action`, before the device is even looked up', async () => {
    const id = await deviceIn(h, h.users.alice, 'pending')
    for (const action of ['APPROVE', 'delete', 'unpair', 42]) await expect400(await post({ deviceId: id, action }), 'Invalid action')
    await expect400(await post({ deviceId: crypto.randomUUID(), action: 'nope' }), 'Invalid action')
    expect((await row(h, id)).status).toBe('pending')
  })

  it('a non-string deviceId or a non-object body → 400', async () => {
    await expect400(await post({ deviceId: 7, action: 'approve' }), 'deviceId must be a string')
    await expect400(await post('["approve"]'), 'Request body must be a JSON object')
    await expect400(await post('null'), 'Request body must be a JSON object')
  })

  it('an unknown device id → 404 `Device not found`', async () => {
    for (const action of ['approve', 'deny', 'revoke']) {
      const res = await post({ deviceId: crypto.randomUUID(), action })
      expect(res.status).toBe(404)
      expect(await res.json()).toEqual({ error: 'Device not found', code: 'NOT_FOUND' })
    }
  })

  it.each(['{"deviceId":', '{deviceId: 1}', ''])('malformed JSON %j on POST /api/devices → 400 `Invalid JSON body` exactly', async (raw) => {
    const res = await post(raw)
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({ error: 'Invalid JSON body', code: 'INVALID_JSON' })
  })

  it('malformed JSON on pair → 400 `Invalid JSON body` (an optional body is still parsed strictly); nothing created', async () => {
    const count = async () => (await lists(h, h.users.bob)).approved.length
    const before = await count()
    for (const raw of ['{"name":', 'name=x', '{']) {
      const res = await call(h, 'POST', '/api/devices/pair', { user: h.users.bob, body: raw })
      expect(res.status).toBe(400)
      expect(await res.json()).toEqual({ error: 'Invalid JSON body', code: 'INVALID_JSON' })
    }
    expect(await count()).toBe(before)
  })

  it('pair: invalid names → 400 VALIDATION; a non-JSON body → 415', async () => {
    const pairWith = (body: unknown, headers?: Record<string, string>) => call(h, 'POST', '/api/devices/pair', { user: h.users.bob, body, headers })
    await expect400(await pairWith({ name: '   ' }), 'Name must not be empty')
    await expect400(await pairWith({ name: 'x'.repeat(65) }), 'Name must be at most 64 characters')
    await expect400(await pairWith({ name: 5 }), 'Name must be a string')
    await expect400(await pairWith('[]'), 'Request body must be a JSON object')
    expect((await pairWith('name=x', { 'content-type': 'text/plain' })).status).toBe(415)
  })

  it('register: invalid names → 400 VALIDATION and nothing created', async () => {
    const put = (qs: string) => call(h, 'PUT', `/api/devices${qs}`, { user: h.users.bob })
    await expect400(await put('?name='), 'Name must not be empty')
    await expect400(await put('?name=%20%20'), 'Name must not be empty')
    await expect400(await put(`?name=${'x'.repeat(65)}`), 'Name must be at most 64 characters')
    await expect400(await put('?name=a&name=b'), 'Name must be a string')
    const { pending } = (await (await call(h, 'GET', '/api/devices', { user: h.users.bob })).json()) as { pending: unknown[] }
    expect(pending).toEqual([])
  })
})

describe('devices: deprecated runtime proxy', () => {
  const runtime = (method: string, body?: unknown) => call(h, method, '/api/runtime/devices', { user: h.users.alice, body })

  it('GET → 404 `No agent found`', async () => {
    const res = await runtime('GET')
    expect(res.status).toBe(404)
    expect(await res.json()).toEqual({ error: 'No agent found', code: 'NOT_FOUND' })
  })

  it('a valid POST → 404 `No agent found`', async () => {
    for (const body of [{ action: 'pair' }, { action: 'unpair', deviceId: 'd1' }, { action: 'test-push', deviceId: 'd1' }]) {
      const res = await runtime('POST', body)
      expect(res.status, JSON.stringify(body)).toBe(404)
      expect(await res.json()).toEqual({ error: 'No agent found', code: 'NOT_FOUND' })
    }
  })

  it('the POST body is validated first: bad or missing action, missing deviceId, malformed JSON → 400', async () => {
    const cases: [unknown, string][] = [
      [{}, 'Missing action'],
      [{ action: 'approve' }, 'Invalid action'],
      [{ action: 'unpair' }, 'Missing deviceId'],
      [{ action: 'test-push', deviceId: '' }, 'Missing deviceId'],
      [{ action: 'unpair', deviceId: 3 }, 'deviceId must be a string'],
    ]
    for (const [body, error] of cases) {
      const res = await runtime('POST', body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(await res.json()).toMatchObject({ error, code: 'VALIDATION' })
    }
    const malformed = await runtime('POST', '{"action":')
    expect(malformed.status).toBe(400)
    expect(await malformed.json()).toEqual({ error: 'Invalid JSON body', code: 'INVALID_JSON' })
  })
})

describe('devices: concurrency', () => {
  it('10 parallel approves of one pending device → exactly one 200, nine 400 `Device is not pending`', async () => {
    const { deviceId } = await register(h, h.users.alice, 'raced')
    const results = await Promise.all(Array.from({ length: 10 }, () => act(h, h.users.alice, deviceId, 'approve')))
    const bodies = await Promise.all(results.map((r) => r.json()))
    expect(results.filter((r) => r.status === 200)).toHaveLength(1)
    const refused = bodies.filter((_, i) => results[i].status !== 200)
    expect(refused).toEqual(Array(9).fill({ error: 'Device is not pending', code: 'INVALID_DEVICE_STATE' }))
    expect((await row(h, deviceId)).status).toBe('approved')
  })

  it('approve and deny racing on one pending device: exactly one wins and the state matches it', async () => {
    const { deviceId } = await register(h, h.users.alice, 'contested')
    const actions = Array.from({ length: 10 }, (_, i) => (i % 2 ? 'deny' : 'approve'))
    const results = await Promise.all(actions.map((a) => act(h, h.users.alice, deviceId, a)))
    const winners = actions.filter((_, i) => results[i].status === 200)
    expect(winners).toHaveLength(1)
    expect(results.filter((r) => r.status === 400)).toHaveLength(9)
    expect((await row(h, deviceId)).status).toBe(winners[0] === 'approve' ? 'approved' : 'denied')
  })
})
