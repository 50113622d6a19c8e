import { eq } from 'drizzle-orm'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { securityEvents } from '../../../schema'
import { useFixture, useHarness } from '../../support/harness'
import { startOidcServer } from '../../support/oidc-server'
import { type QueueFault, publishingThrough, startQueueFault } from '../../support/queue-fault'
import { waitFor } from '../../support/wait'
import { googleEnv, postRisc, riscToken } from './helpers'

// A security event whose processing cannot be queued is not acknowledged: 502 `QUEUE_UNAVAILABLE`, so Google sends it
// again, and its row is removed (kept, it would make that retry look like a duplicate and the event would never act).
const KEY = 'risc-queue-down-signing-key'
const oidc = useFixture(() => startOidcServer())
const h = useHarness(() => ({ env: googleEnv(oidc, { QSTASH_CURRENT_SIGNING_KEY: KEY }) }))
const q: QueueFault = useFixture(() => startQueueFault((req) => h.web.fetch(req), KEY), { close: (f) => f.close() })
afterEach(() => vi.restoreAllMocks())

const TIMEOUT_MS = 400
const WITHIN_MS = TIMEOUT_MS + 1500
const eventRow = async (jti: string) => (await h.db.select().from(securityEvents).where(eq(securityEvents.jti, jti)))[0]

describe('POST /api/security/risc while the queue is down', () => {
  it.each([
    ['refusing connections', 'refuse' as const],
    ['blackholed (accepts, never answers)', 'blackhole' as const],
    ['answering 503', { kind: 'status', status: 503 } as const],
  ])('QStash %s: 502 `QUEUE_UNAVAILABLE` in time, no event row; Google’s retry once the queue is back is stored and processed', async (_name, fault) => {
    vi.spyOn(console, 'warn').mockImplementation(() => {})
    const jti = `queue-down-${crypto.randomUUID()}`
    const token = await riscToken(oidc, 'verification', undefined, { jti })
    const queue = q.queue(TIMEOUT_MS)
    await postRisc(h, await riscToken(oidc, 'verification', undefined)) // the JWKS cached: only the queue is timed
    await q.proxy.set(fault)
    const started = performance.now()
    const res = await publishingThrough(h.services, queue, () => postRisc(h, token)).finally(() => q.proxy.set('pass'))
    const ms = performance.now() - started
    expect(res.status).toBe(502)
    expect(res.headers.get('retry-after')).toBe('5')
    expect(await res.json()).toEqual({ error: 'Queue unavailable', code: 'QUEUE_UNAVAILABLE' })
    expect(ms).toBeLessThan(WITHIN_MS)
    expect(await eventRow(jti)).toBeUndefined()
    expect(q.qstash.published.some((m) => m.body.includes(jti))).toBe(false)

    // Google sends the same token again once the queue is back: acknowledged, queued through QStash and processed.
    const again = await publishingThrough(h.services, queue, () => postRisc(h, token))
    expect(again.status).toBe(202)
    expect(q.qstash.published.filter((m) => m.body.includes(jti))).toHaveLength(1)
    await waitFor(async () => (await eventRow(jti))?.processedAt != null, { what: 'the event processed through QStash' })
  }, 30_000)
})
