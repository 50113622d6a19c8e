import { eq } from 'drizzle-orm'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { mailOutbox, passwordResets } from '../../../schema'
import { useFixture, useHarness } from '../../support/harness'
import { type QueueFault, publishingThrough, startQueueFault } from '../../support/queue-fault'
import { waitFor } from '../../support/wait'
import { forgot, freshUser } from './helpers'

// A reset asked while the queue is down must not say "sent": nothing would ever send it. The answer is 502
// `QUEUE_UNAVAILABLE` (with Retry-After) in time, and nothing is written: no token, no mail.
const KEY = 'users-queue-down-signing-key'
const h = useHarness({ env: { QSTASH_CURRENT_SIGNING_KEY: KEY } })
const q: QueueFault = useFixture(() => startQueueFault((req) => h.web.fetch(req), KEY), { close: (f) => f.close() })
afterEach(() => vi.restoreAllMocks())

/** Each publish gives up after this long (`QSTASH_TIMEOUT_MS`); the answer comes within it and room for a loaded machine. */
const TIMEOUT_MS = 400
const WITHIN_MS = TIMEOUT_MS + 1500

const resetsOf = (userId: string) => h.db.select().from(passwordResets).where(eq(passwordResets.userId, userId))
const mailsTo = (email: string) => h.db.select().from(mailOutbox).where(eq(mailOutbox.to, email))

describe('POST /api/auth/forgot-password while the queue is down', () => {
  it.each([
    ['refusing connections', 'refuse' as const],
    ['blackholed (accepts, never answers)', 'blackhole' as const],
    ['answering 503', { kind: 'status', status: 503 } as const],
  ])('QStash %s: 502 `QUEUE_UNAVAILABLE` with Retry-After in time, no token and no mail; once back, the reset is mailed', async (_name, fault) => {
    vi.spyOn(console, 'warn').mockImplementation(() => {}) // queue.publish_retry, dependency.unavailable
    vi.spyOn(console, 'info').mockImplementation(() => {}) // the dev outbox's mail line
    const carol = await freshUser(h)
    const queue = q.queue(TIMEOUT_MS)
    await q.proxy.set(fault)
    const started = performance.now()
    const res = await publishingThrough(h.services, queue, () => forgot(h, carol.email)).finally(() => q.proxy.set('pass'))
    const ms = performance.now() - started
    expect(res.status).toBe(502)
    expect(res.headers.get('retry-after')).toBe('5')
    expect(await res.json()).toEqual({ error: 'Queue unavailable', code: 'QUEUE_UNAVAILABLE' })
    expect(ms).toBeLessThan(WITHIN_MS)
    expect(q.qstash.published.some((m) => m.body.includes(carol.email))).toBe(false)
    expect(await resetsOf(carol.id)).toEqual([])
    expect(await mailsTo(carol.email)).toEqual([])

    // The queue is back: the same request is accepted, delivered through QStash, and mailed.
    const again = await publishingThrough(h.services, queue, () => forgot(h, carol.email))
    expect(again.status).toBe(200)
    await waitFor(async () => (await mailsTo(carol.email)).length === 1, { what: 'the reset mail delivered through QStash' })
    expect(await resetsOf(carol.id)).toHaveLength(1)
  }, 30_000)
})
