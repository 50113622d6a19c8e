import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { permissionHub } from '../../../functions/permissions/hub'
import type { Harness } from '../../support/harness'
import { call } from '../../support/requests'
import { dangerousCall, type Dashboard, hook, listen, openDashboard, permissionsHarness, poll, quietFor, storedRequest } from './helpers'
import { useFixture } from '../../support/harness'

// The permission socket on a real Node listener (infra/websocket.ts, as `npm start` serves it), with real clients.
let server: Awaited<ReturnType<typeof listen>>
const open: Dashboard[] = []
const dashboard = async (...args: Parameters<typeof openDashboard> extends [string, ...infer R] ? R : never) => {
  const d = await openDashboard(server.url, ...args)
  open.push(d)
  return d
}
const h = useFixture(() => permissionsHarness())
beforeAll(async () => {
  server = await listen(h)
})
afterAll(async () => {
  await Promise.all(open.map((d) => d.close()))
  await server?.close()
})

const isRequest = (id: string) => (m: { type: string; requestId?: unknown }) => m.type === 'permission_request' && m.requestId === id
const isDecided = (id: string) => (m: { type: string; requestId?: unknown }) => m.type === 'permission_decided' && m.requestId === id
const isError = (m: { type: string }) => m.type === 'error'

describe('permissions: the dashboard socket (Node, real clients)', () => {
  it("a dangerous call is pushed to the owner's open dashboards, and to no one else's", async () => {
    const { alice, bob } = h.users
    const [a1, a2, b] = [await dashboard(alice), await dashboard(alice), await dashboard(bob)]
    const requestId = await dangerousCall(h, alice.id, { agentId: 'agent-7' })
    const row = await storedRequest(h, requestId)
    for (const d of [a1, a2]) {
      expect(await d.next(isRequest(requestId))).toEqual({
        type: 'permission_request',
        requestId,
        agentId: 'agent-7',
        toolName: 'frobnicate',
        toolInput: { level: 11 },
        reason: row.reason,
        createdAt: row.createdAt.toISOString(),
        expiresAt: new Date(row.createdAt.getTime() + 10 * 60_000).toISOString(),
      })
    }
    await quietFor()
    expect(b.received.filter((m) => m.requestId === requestId)).toEqual([])
  })

  it('a decision message applies once: every dashboard of the owner hears it, the hook sees it; a second is refused on its socket only', async () => {
    const { alice } = h.users
    const [deciding, other] = [await dashboard(alice), await dashboard(alice)]
    const requestId = await dangerousCall(h, alice.id)
    await deciding.next(isRequest(requestId))
    deciding.send({ type: 'decision', requestId, decision: 'approve' })
    for (const d of [deciding, other]) expect(await d.next(isDecided(requestId))).toEqual({ type: 'permission_decided', requestId, status: 'approved' })
    const state = (await (await poll(h, requestId)).json()) as { status: string; decidedAt: string }
    expect(state.status).toBe('approved')

    deciding.send({ type: 'decision', requestId, decision: 'deny' })
    expect(await deciding.next(isError)).toEqual({ type: 'error', requestId, error: 'Permission request already decided', code: 'ALREADY_DECIDED' })
    await quietFor()
    expect(other.received.filter(isError)).toEqual([])
    expect((await storedRequest(h, requestId)).status).toBe('approved')
  })

  it('a dashboard that connects after the request gets it, pending, on connect (oldest first); decided ones are not sent', async () => {
    const { bob } = h.users
    const first = await dangerousCall(h, bob.id)
    const decided = await dangerousCall(h, bob.id)
    const second = await dangerousCall(h, bob.id)
    expect((await call(h, 'POST', `/api/permissions/${decided}`, { user: bob, body: { decision: 'deny' } })).status).toBe(200)
    const late = await dashboard(bob)
    const a = await late.next((m) => m.type === 'permission_request')
    const b = await late.next((m) => m.type === 'permission_request')
    expect([a.requestId, b.requestId]).toEqual([first, second])
    expect(a).toMatchObject({ toolName: 'frobnicate', toolInput: { level: 11 }, agentId: 'unknown' })
    await quietFor()
    expect(late.received.some((m) => m.requestId === decided)).toBe(false)
  })

  it('a decision over HTTP reaches the open dashboards as permission_decided', async () => {
    const { alice } = h.users
    const d = await dashboard(alice)
    const requestId = await dangerousCall(h, alice.id)
    await d.next(isRequest(requestId))
    expect((await call(h, 'POST', `/api/permissions/${requestId}`, { user: alice, body: { decision: 'deny' } })).status).toBe(200)
    expect(await d.next(isDecided(requestId))).toEqual({ type: 'permission_decided', requestId, status: 'denied' })
  })

  it("another user's request, or an unknown id, over the socket: NOT_FOUND to the sender; nothing changes", async () => {
    const { alice, bob } = h.users
    const d = await dashboard(alice)
    const bobs = await dangerousCall(h, bob.id)
    d.send({ type: 'decision', requestId: bobs, decision: 'approve' })
    expect(await d.next(isError)).toEqual({ type: 'error', requestId: bobs, error: 'Permission request not found', code: 'NOT_FOUND' })
    d.send({ type: 'decision', requestId: 'no-such-request', decision: 'deny' })
    expect(await d.next(isError)).toMatchObject({ requestId: 'no-such-request', code: 'NOT_FOUND' })
    expect((await storedRequest(h, bobs)).status).toBe('pending')
  })

  it("malformed messages are answered with an error on that socket only; it stays open and no one else's closes", async () => {
    const { alice, bob } = h.users
    const [d, other, bobs] = [await dashboard(alice), await dashboard(alice), await dashboard(bob)]
    const cases: Array<[unknown, Record<string, unknown>]> = [
      ['not json', { requestId: null, error: 'Invalid JSON message', code: 'INVALID_JSON' }],
      [{ type: 'decision', requestId: 'r1', decision: 'maybe' }, { requestId: 'r1', code: 'VALIDATION' }],
      [{ type: 'subscribe' }, { requestId: null, code: 'VALIDATION' }],
      [[1, 2, 3], { requestId: null, code: 'VALIDATION' }],
      [{ type: 'decision', requestId: 42, decision: 'approve' }, { requestId: null, code: 'VALIDATION' }],
      [{ type: 'decision', requestId: 'x'.repeat(5000), decision: 'approve' }, { requestId: null, error: 'Message too large', code: 'PAYLOAD_TOO_LARGE' }],
    ]
    for (const [message, expected] of cases) {
      d.send(message)
      expect(await d.next(isError), JSON.stringify(message).slice(0, 80)).toMatchObject({ type: 'error', ...expected })
    }
    d.ws.send(Buffer.from([1, 2, 3]), { binary: true })
    expect(await d.next(isError)).toMatchObject({ requestId: null, error: 'Invalid message: text frames only', code: 'VALIDATION' })

    // Everyone still connected, and pushes still arrive.
    const requestId = await dangerousCall(h, alice.id)
    for (const x of [d, other]) await x.next(isRequest(requestId))
    expect([d, other, bobs].map((x) => x.ws.readyState)).toEqual([1, 1, 1])
    expect(other.received.filter(isError)).toEqual([])
  })

  it('a frame over 64 KB closes that socket alone (1009)', async () => {
    const { alice } = h.users
    const [big, other] = [await dashboard(alice), await dashboard(alice)]
    const closed = new Promise<number>((r) => big.ws.once('close', (code) => r(code)))
    big.send('x'.repeat(70 * 1024))
    expect(await closed).toBe(1009)
    const requestId = await dangerousCall(h, alice.id)
    await other.next(isRequest(requestId))
  })

  it('a closed dashboard leaves the hub, and the hook still answers 200 with nobody connected', async () => {
    const { admin } = h.users
    const d = await dashboard(admin)
    const hub = permissionHub(h.services)
    expect(hub.count(admin.id)).toBe(1)
    d.ws.terminate()
    await new Promise((r) => setTimeout(r, 100))
    expect(hub.count(admin.id)).toBe(0)
    const res = await hook(h, { toolName: 'frobnicate', userId: admin.id })
    expect(res.status).toBe(200)
  })

  it('refused: no session (401), a forged or expired cookie (401), a foreign Origin (403)', async () => {
    const { alice } = h.users
    await expect(openDashboard(server.url, null)).rejects.toMatchObject({ status: 401 })
    await expect(openDashboard(server.url, { ...alice, cookie: 'service-session=forged' })).rejects.toMatchObject({ status: 401 })
    await expect(openDashboard(server.url, alice, { origin: 'https://evil.example' })).rejects.toMatchObject({ status: 403 })
  })

  it('closing the server closes open sockets with 1001', async () => {
    const other = await listen(h)
    const d = await openDashboard(other.url, h.users.alice)
    const closed = new Promise<number>((r) => d.ws.once('close', (code) => r(code)))
    await other.close()
    expect(await closed).toBe(1001)
  })
})
