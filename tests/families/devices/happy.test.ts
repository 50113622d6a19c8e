import { describe, expect, it } from 'vitest'
import { webClient } from '../../support/client'
import { type SeededUser, useHarness } from '../../support/harness'
import { lists, pair, register, row } from './helpers'

const h = useHarness()

const isIso = (s: string) => new Date(s).toISOString() === s
/** A state change through the typed client: a wrong action is a compile error here. */
const act = (user: SeededUser, deviceId: string, action: 'approve' | 'deny' | 'revoke') =>
  webClient(h, user).api.devices.$post({ json: { deviceId, action } })

describe('devices: register (PUT)', () => {
  it('creates a pending device with a 6-character code and the exact pairing URL', async () => {
    const res = await webClient(h, h.users.alice).api.devices.$put({ query: { name: 'Laptop' } })
    expect(res.status).toBe(200)
    if (res.status !== 200) throw new Error(`status ${res.status}`)
    const body = await res.json()
    expect(Object.keys(body).sort()).toEqual(['deviceId', 'pairingCode', 'pairingUrl', 'success'])
    expect(body.success).toBe(true)
    expect(body.pairingCode).toMatch(/^[A-Z0-9]{6}$/)
    expect(body.pairingUrl).toBe(`/dashboard/devices?pair=${body.pairingCode}&id=${body.deviceId}`)
    const stored = await row(h, body.deviceId)
    expect(stored).toMatchObject({ userId: h.users.alice.id, name: 'Laptop', status: 'pending', pairingCode: body.pairingCode })
  })

  it('names default to `My Device`, are trimmed, and may be 64 characters', async () => {
    expect((await row(h, (await register(h, h.users.alice)).deviceId)).name).toBe('My Device')
    expect((await row(h, (await register(h, h.users.alice, '  Desk  ')).deviceId)).name).toBe('Desk')
    expect((await row(h, (await register(h, h.users.alice, 'x'.repeat(64))).deviceId)).name).toHaveLength(64)
  })

  it('records the client IP and sets firstSeen = lastSeen', async () => {
    const { deviceId } = await register(h, h.users.alice, 'ip', { 'cf-connecting-ip': '198.51.100.7' })
    const stored = await row(h, deviceId)
    expect(stored.ip).toMatch(/198\.51\.100\.7$/) // the harness prefixes its own namespace
    expect(stored.lastSeen.getTime()).toBe(stored.firstSeen.getTime())
    expect(stored.pairedAt).toBeNull()
  })
})

describe('devices: pair', () => {
  it('creates an approved device with pairedAt and the documented shape', async () => {
    const res = await webClient(h, h.users.alice).api.devices.pair.$post({ json: { name: ' Phone ' } })
    expect(res.status).toBe(200)
    if (res.status !== 200) return
    const body = await res.json()
    expect(body.success).toBe(true)
    expect(Object.keys(body.device).sort()).toEqual(['id', 'name', 'pairedAt', 'status'])
    expect(body.device).toMatchObject({ name: 'Phone', status: 'approved' })
    expect(isIso(body.device.pairedAt)).toBe(true)
    const stored = await row(h, body.device.id)
    expect(stored).toMatchObject({ userId: h.users.alice.id, status: 'approved', pairingCode: null })
    expect(stored.pairedAt?.toISOString()).toBe(body.device.pairedAt)
  })

  it('defaults to `My iPhone` with {}, an empty JSON body, or no body and no Content-Type', async () => {
    expect((await pair(h, h.users.alice, {})).name).toBe('My iPhone')
    expect((await pair(h, h.users.alice, '')).name).toBe('My iPhone')
    expect((await pair(h, h.users.alice, '  \n')).name).toBe('My iPhone')
    const bare = await h.web.request('/api/devices/pair', { method: 'POST', headers: { cookie: h.users.alice.cookie } })
    expect(bare.status).toBe(200)
    expect(((await bare.json()) as { device: { name: string } }).device.name).toBe('My iPhone')
  })

  it('records the client IP', async () => {
    const res = await webClient(h, h.users.alice, { 'cf-connecting-ip': '198.51.100.9' }).api.devices.pair.$post({ json: {} })
    if (res.status !== 200) throw new Error(`status ${res.status}`)
    const { device } = await res.json()
    expect((await row(h, device.id)).ip).toMatch(/198\.51\.100\.9$/)
  })
})

describe('devices: list', () => {
  it("lists only the caller's pending and approved devices, newest first, in the Device shape", async () => {
    const user = await h.seedUser('Lister', 'lister@example.com')
    const a = await register(h, user, 'a')
    const b = await register(h, user, 'b')
    const p = await pair(h, user, { name: 'p' })
    const denied = await register(h, user, 'denied')
    expect((await act(user, denied.deviceId, 'deny')).status).toBe(200)

    const got = await lists(h, user)
    expect(got.pending.map((d) => d.id)).toEqual([b.deviceId, a.deviceId])
    expect(got.approved.map((d) => d.id)).toEqual([p.id])
    const item = got.pending[1]
    expect(Object.keys(item).sort()).toEqual(['firstSeen', 'id', 'ip', 'lastSeen', 'name', 'status'])
    expect(item).toMatchObject({ id: a.deviceId, name: 'a', status: 'pending' })
    expect(isIso(item.firstSeen) && isIso(item.lastSeen)).toBe(true)
    expect(JSON.stringify(got)).not.toContain(a.pairingCode) // the code is not listed
  })

  it('a new user has empty lists', async () => {
    expect(await lists(h, await h.seedUser('Empty', 'empty@example.com'))).toEqual({ pending: [], approved: [] })
  })
})

describe('devices: approve, deny, revoke', () => {
  it('approve: pending → approved; answers {success, pending, approved} after the change', async () => {
    const user = await h.seedUser('Approver', 'approver@example.com')
    const { deviceId } = await register(h, user, 'to approve')
    const res = await act(user, deviceId, 'approve')
    if (res.status !== 200) throw new Error(`status ${res.status}`)
    const body = await res.json()
    expect(body.success).toBe(true)
    expect(body.pending).toEqual([])
    expect(body.approved.map((d) => [d.id, d.status])).toEqual([[deviceId, 'approved']])
    expect(await lists(h, user)).toEqual({ pending: body.pending, approved: body.approved })
  })

  it('deny: pending → denied, and the device leaves both lists', async () => {
    const user = await h.seedUser('Denier', 'denier@example.com')
    const { deviceId } = await register(h, user)
    const res = await act(user, deviceId, 'deny')
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ success: true, pending: [], approved: [] })
    expect((await row(h, deviceId)).status).toBe('denied')
  })

  it('revoke: approved → revoked (both an approved and a paired device)', async () => {
    const user = await h.seedUser('Revoker', 'revoker@example.com')
    const { deviceId } = await register(h, user)
    await act(user, deviceId, 'approve')
    const paired = await pair(h, user)
    for (const id of [deviceId, paired.id]) {
      expect((await act(user, id, 'revoke')).status).toBe(200)
      expect((await row(h, id)).status).toBe('revoked')
    }
    expect(await lists(h, user)).toEqual({ pending: [], approved: [] })
  })

  it('every state change moves lastSeen forward and keeps firstSeen and ip', async () => {
    const { deviceId } = await register(h, h.users.alice, 'seen', { 'cf-connecting-ip': '198.51.100.20' })
    const before = await row(h, deviceId)
    for (const action of ['approve', 'revoke'] as const) {
      const prev = await row(h, deviceId)
      await new Promise((r) => setTimeout(r, 5))
      expect((await act(h.users.alice, deviceId, action)).status).toBe(200)
      const next = await row(h, deviceId)
      expect(next.lastSeen.getTime()).toBeGreaterThan(prev.lastSeen.getTime())
      expect(next.firstSeen).toEqual(before.firstSeen)
      expect(next.ip).toBe(before.ip)
    }
  })

  it('the web OpenAPI document describes every operation; the runtime proxy is deprecated', async () => {
    const doc = (await (await h.web.request('/api/openapi.json')).json()) as {
      paths: Record<string, Record<string, { deprecated?: boolean; requestBody?: { required?: boolean } }>>
    }
    expect(Object.keys(doc.paths['/api/devices']).sort()).toEqual(['get', 'post', 'put'])
    expect(doc.paths['/api/devices/pair'].post.requestBody?.required).toBeFalsy()
    expect(doc.paths['/api/runtime/devices'].get.deprecated).toBe(true)
    expect(doc.paths['/api/runtime/devices'].post.deprecated).toBe(true)
    expect(doc.paths['/api/devices'].get.deprecated).toBeUndefined()
  })
})
