import { eq } from 'drizzle-orm'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { permissionRequests } from '../../../schema'
import type { Harness } from '../../support/harness'
import { call } from '../../support/requests'
import { dangerousCall, type Dashboard, expiryDelivery, listen, openDashboard, permissionsHarness, poll, quietFor, storedRequest, TTL_MS } from './helpers'
import { useFixture } from '../../support/harness'

// A permission request nobody decides within 10 minutes expires: a denial at the poll, gone from the list and the
// socket's pending, refused as a decision, and the expiry job tells the owner's open dashboards.
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
afterEach(() => vi.useRealTimers())

let n = 0
const owner = () => h.seedUser(`Owner${++n}`, `owner-${n}-${crypto.randomUUID().slice(0, 6)}@example.com`)
/** Moves the server's clock (JS `Date`, the injected clock) to `ms` after the request's creation. */
async function at(requestId: string, ms: number) {
  const row = await storedRequest(h as Harness, requestId)
  vi.useFakeTimers({ toFake: ['Date'] })
  vi.setSystemTime(row.createdAt.getTime() + ms)
  return row
}
const listed = async (user: Awaited<ReturnType<typeof owner>>) =>
  ((await (await call(h, 'GET', '/api/permissions', { user })).json()) as { requests: Array<{ requestId: string }> }).requests.map((r) => r.requestId)

describe('permission requests expire after 10 minutes', () => {
  it('just before: still pending and decidable; at 10 minutes: the poll reads a denial, the list drops it', async () => {
    const user = await owner()
    const requestId = await dangerousCall(h, user.id)
    const row = await at(requestId, TTL_MS - 1000)
    const expiresAt = new Date(row.createdAt.getTime() + TTL_MS).toISOString()
    expect(await (await poll(h, requestId)).json()).toEqual({ requestId, status: 'pending', decidedAt: null, expired: false, expiresAt })
    expect(await listed(user)).toContain(requestId)

    vi.setSystemTime(row.createdAt.getTime() + TTL_MS)
    // Before the expiry job has run (the row still says pending), every reader already agrees.
    expect((await storedRequest(h, requestId)).status).toBe('pending')
    expect(await (await poll(h, requestId)).json()).toEqual({ requestId, status: 'denied', decidedAt: expiresAt, expired: true, expiresAt })
    expect(await listed(user)).not.toContain(requestId)
  })

  it('the expiry job marks it `expired` once and tells the owner’s dashboards; a redelivery changes nothing', async () => {
    const user = await owner()
    const other = await owner()
    const [d, elsewhere] = [await dashboard(user), await dashboard(other)]
    const requestId = await dangerousCall(h, user.id)
    const row = await at(requestId, TTL_MS + 500)
    const res = await expiryDelivery(h, { requestId })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ ok: true, requestId, expired: true })
    expect(await storedRequest(h, requestId)).toMatchObject({ status: 'expired', decidedAt: null })
    const again = await expiryDelivery(h, { requestId })
    expect(await again.json()).toEqual({ ok: true, requestId, expired: false })
    vi.useRealTimers()
    expect(await d.next((m) => m.type === 'permission_expired')).toEqual({
      type: 'permission_expired',
      requestId,
      expiresAt: new Date(row.createdAt.getTime() + TTL_MS).toISOString(),
    })
    await quietFor()
    expect(d.received.filter((m) => m.type === 'permission_expired')).toHaveLength(1)
    expect(elsewhere.received.some((m) => m.requestId === requestId)).toBe(false)
    // Marked, it still reads as the same denial.
    expect(await (await poll(h, requestId)).json()).toMatchObject({ status: 'denied', expired: true })
  })

  it('a dashboard that connects after the expiry is not sent the request', async () => {
    const user = await owner()
    const fresh = await dangerousCall(h, user.id)
    const old = await dangerousCall(h, user.id)
    const { createdAt } = await storedRequest(h, fresh)
    // The older one expired; the fresh one was made (by the test's hand) 10 minutes later.
    await h.db.update(permissionRequests).set({ createdAt: new Date(createdAt.getTime() - TTL_MS - 1000) }).where(eq(permissionRequests.id, old))
    const d = await dashboard(user)
    await d.next((m) => m.type === 'permission_request' && m.requestId === fresh)
    await quietFor()
    expect(d.received.some((m) => m.requestId === old)).toBe(false)
  })

  it('expired, a decision by HTTP is 410 `PERMISSION_EXPIRED` and by socket an error; nothing changes', async () => {
    const user = await owner()
    const requestId = await dangerousCall(h, user.id)
    await at(requestId, TTL_MS)
    for (const decision of ['approve', 'deny']) {
      const res = await call(h, 'POST', `/api/permissions/${requestId}`, { user, body: { decision } })
      expect(res.status).toBe(410)
      expect(await res.json()).toEqual({ error: 'Permission request expired', code: 'PERMISSION_EXPIRED' })
    }
    // Marked by the job too: still 410, not 409.
    expect((await (await expiryDelivery(h, { requestId })).json()).expired).toBe(true)
    expect((await call(h, 'POST', `/api/permissions/${requestId}`, { user, body: { decision: 'approve' } })).status).toBe(410)
    vi.useRealTimers()
    const d = await dashboard(user)
    d.send({ type: 'decision', requestId, decision: 'approve' })
    expect(await d.next((m) => m.type === 'error')).toEqual({ type: 'error', requestId, error: 'Permission request expired', code: 'PERMISSION_EXPIRED' })
    expect(await storedRequest(h, requestId)).toMatchObject({ status: 'expired', decidedAt: null })
    expect(await (await poll(h, requestId)).json()).toMatchObject({ status: 'denied', expired: true })
  })

  it('decided before the expiry: the decision stands, the job changes nothing and says nothing', async () => {
    const user = await owner()
    const d = await dashboard(user)
    const requestId = await dangerousCall(h, user.id)
    expect((await call(h, 'POST', `/api/permissions/${requestId}`, { user, body: { decision: 'approve' } })).status).toBe(200)
    await at(requestId, TTL_MS + 1000)
    expect(await (await expiryDelivery(h, { requestId })).json()).toEqual({ ok: true, requestId, expired: false })
    expect(await (await poll(h, requestId)).json()).toMatchObject({ status: 'approved', expired: false })
    vi.useRealTimers()
    await quietFor()
    expect(d.received.some((m) => m.type === 'permission_expired')).toBe(false)
  })

  it('a decision racing the expiry job at the deadline: exactly one of them wins', async () => {
    const user = await owner()
    for (const offset of [-1, 0]) {
      const requestId = await dangerousCall(h, user.id)
      await at(requestId, TTL_MS + offset)
      const [decided, job] = await Promise.all([
        call(h, 'POST', `/api/permissions/${requestId}`, { user, body: { decision: 'approve' } }),
        expiryDelivery(h, { requestId }),
      ])
      const { expired } = await job.json()
      const stored = await storedRequest(h, requestId)
      if (offset < 0) {
        expect([decided.status, expired, stored.status]).toEqual([200, false, 'approved'])
      } else {
        expect([decided.status, expired, stored.status]).toEqual([410, true, 'expired'])
      }
      vi.useRealTimers()
    }
  })

  it('a delivery before the expiry (clock skew) leaves the request pending', async () => {
    const user = await owner()
    const requestId = await dangerousCall(h, user.id)
    await at(requestId, TTL_MS - 5000)
    expect(await (await expiryDelivery(h, { requestId })).json()).toEqual({ ok: true, requestId, expired: false })
    expect((await storedRequest(h, requestId)).status).toBe('pending')
  })

  it('the job for an unknown request or an ownerless one: 200, nothing to tell', async () => {
    expect(await (await expiryDelivery(h, { requestId: crypto.randomUUID() })).json()).toMatchObject({ expired: false })
    const requestId = await dangerousCall(h, 'nobody-at-all')
    expect((await storedRequest(h, requestId)).userId).toBeNull()
    await at(requestId, TTL_MS)
    expect(await (await expiryDelivery(h, { requestId })).json()).toMatchObject({ expired: true })
    expect(await (await poll(h, requestId)).json()).toMatchObject({ status: 'denied', expired: true })
  })

  it('the receiver: 400 for a body without a request id; 401 unsigned or signed with another key, nothing changed', async () => {
    const user = await owner()
    const requestId = await dangerousCall(h, user.id)
    await at(requestId, TTL_MS)
    for (const body of [{}, { requestId: '' }, { requestId: 7 }]) expect((await expiryDelivery(h, body)).status).toBe(400)
    for (const key of [null, 'not-the-queue-key']) {
      const res = await expiryDelivery(h, { requestId }, key)
      expect(res.status).toBe(401)
    }
    expect((await storedRequest(h, requestId)).status).toBe('pending')
  })
})
