import { eq } from 'drizzle-orm'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { signDelivery } from '../../../lib/queue/sign'
import { HEALTH_WAIT_PATH, HEALTH_WAIT_TIMEOUT_MS } from '../../../lib/watchdog/health-wait'
import { agents } from '../../../schema'
import { startFakeRuntime } from '../../support/fake-runtime'
import { useFixture, useHarness } from '../../support/harness'
import { type QueueFault, publishingThrough, startQueueFault } from '../../support/queue-fault'
import { deliver, QUEUE_KEY, seedAgent, watchRow } from './helpers'

// A cron or queue delivery whose own publish the queue refuses (the sweep's batches, the health wait's next poll)
// answers 502 `QUEUE_UNAVAILABLE` with Retry-After, as documented: the queue delivers it again, and nothing it
// would have left half done (a lease, a row) was written.
const h = useHarness({ env: { QSTASH_CURRENT_SIGNING_KEY: QUEUE_KEY }, plan: 'network' })
const q: QueueFault = useFixture(() => startQueueFault((req) => h.web.fetch(req), QUEUE_KEY), { close: (f) => f.close() })
const never = useFixture(() => startFakeRuntime()) // answers 404 everywhere: never up
afterEach(() => vi.restoreAllMocks())

const refused = async (res: Response) => {
  expect(res.status).toBe(502)
  expect(res.headers.get('retry-after')).toBe('5')
  expect(await res.json()).toEqual({ error: 'Queue unavailable', code: 'QUEUE_UNAVAILABLE' })
}

describe('the queue refuses what a delivery publishes', () => {
  it('the watchdog sweep: 502, no agent leased; once back, its batch is published', async () => {
    vi.spyOn(console, 'warn').mockImplementation(() => {})
    vi.spyOn(console, 'error').mockImplementation(() => {})
    const agent = await seedAgent(h, h.users.alice, never.url)
    const queue = q.queue(400)
    await q.proxy.set('refuse')
    await refused(await publishingThrough(h.services, queue, () => deliver(h, {})).finally(() => q.proxy.set('pass')))
    expect(await watchRow(h, agent.id)).toBeUndefined()
    const again = await publishingThrough(h.services, queue, () => deliver(h, {}))
    expect(again.status).toBe(200)
    expect(q.qstash.published.some((m) => m.body.includes(agent.id))).toBe(true)
  }, 30_000)

  it("the health wait's next poll: 502, the agent still starting", async () => {
    vi.spyOn(console, 'warn').mockImplementation(() => {})
    vi.spyOn(console, 'error').mockImplementation(() => {})
    const startedAt = new Date()
    const agent = await seedAgent(h, h.users.bob, never.url, { status: 'starting', startedAt })
    const url = `http://127.0.0.1:8787${HEALTH_WAIT_PATH}`
    const body = JSON.stringify({ agentId: agent.id, startedAt: startedAt.toISOString(), until: Date.now() + HEALTH_WAIT_TIMEOUT_MS })
    const send = async () =>
      h.web.request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'upstash-signature': await signDelivery(QUEUE_KEY, url, body) }, body })
    const queue = q.queue(400)
    await q.proxy.set({ kind: 'status', status: 503 })
    await refused(await publishingThrough(h.services, queue, send).finally(() => q.proxy.set('pass')))
    const [row] = await h.db.select({ status: agents.status }).from(agents).where(eq(agents.id, agent.id))
    expect(row.status).toBe('starting')
    expect((await publishingThrough(h.services, queue, send)).status).toBe(200)
  }, 30_000)
})
