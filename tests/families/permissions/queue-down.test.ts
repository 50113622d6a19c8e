import { afterEach, describe, expect, it, vi } from 'vitest'
import { useFixture } from '../../support/harness'
import { call } from '../../support/requests'
import { type QueueFault, publishingThrough, startQueueFault } from '../../support/queue-fault'
import { hook, permissionsHarness, poll, QUEUE_KEY, storedRequest, TTL_MS } from './helpers'

// A permission request whose expiry job could not be queued still expires: the poll, the list and a decision judge
// `created_at + 10 minutes` themselves. So the hook answers as usual (its request recorded) when the queue is down.
const h = useFixture(() => permissionsHarness())
const q: QueueFault = useFixture(() => startQueueFault((req) => h.web.fetch(req), QUEUE_KEY), { close: (f) => f.close() })
afterEach(() => {
  vi.useRealTimers()
  vi.restoreAllMocks()
})

const TIMEOUT_MS = 400
const WITHIN_MS = TIMEOUT_MS + 1500

describe('POST /api/hooks/classify while the queue is down', () => {
  it.each([
    ['refusing connections', 'refuse' as const],
    ['blackholed (accepts, never answers)', 'blackhole' as const],
    ['answering 503', { kind: 'status', status: 503 } as const],
  ])('QStash %s: the request is recorded and answered in time; with no expiry job it still expires at 10 minutes', async (_name, fault) => {
    const warned = vi.spyOn(console, 'warn').mockImplementation(() => {})
    vi.spyOn(console, 'info').mockImplementation(() => {})
    const user = await h.seedUser('Owner', `owner-${crypto.randomUUID().slice(0, 8)}@example.com`)
    await q.proxy.set(fault)
    const started = performance.now()
    const res = await publishingThrough(h.services, q.queue(TIMEOUT_MS), () => hook(h, { toolName: 'frobnicate', toolInput: { level: 11 }, userId: user.id })).finally(() =>
      q.proxy.set('pass'),
    )
    const ms = performance.now() - started
    expect(res.status).toBe(200)
    const { requestId, allow, tier } = (await res.json()) as { requestId: string; allow: boolean; tier: string }
    expect({ allow, tier }).toEqual({ allow: false, tier: 'dangerous' })
    expect(ms).toBeLessThan(WITHIN_MS)
    expect(q.qstash.published.some((m) => m.body.includes(requestId))).toBe(false)
    expect(warned.mock.calls.map(([line]) => JSON.parse(String(line)).event)).toContain('permissions.expiry_publish_failed')
    const row = await storedRequest(h, requestId)
    expect(row.status).toBe('pending')
    const listed = async () => ((await (await call(h, 'GET', '/api/permissions', { user })).json()) as { requests: Array<{ requestId: string }> }).requests.map((r) => r.requestId)
    expect(await listed()).toContain(requestId)

    // Ten minutes on, no job has run: the row still says pending, and every reader already reads a denial.
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(row.createdAt.getTime() + TTL_MS)
    expect((await storedRequest(h, requestId)).status).toBe('pending')
    expect(await (await poll(h, requestId)).json()).toMatchObject({ requestId, status: 'denied', expired: true })
    expect(await listed()).not.toContain(requestId)
    const decide = await call(h, 'POST', `/api/permissions/${requestId}`, { user, body: { decision: 'approve' } })
    expect(decide.status).toBe(410)
  }, 30_000)
})
