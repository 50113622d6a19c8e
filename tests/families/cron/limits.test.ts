import { eq } from 'drizzle-orm'
import { afterAll, describe, expect, it } from 'vitest'
import { WatchdogMessage } from '../../../functions/cron/schemas'
import { reconcileAccess } from '../../../functions/cron/watchdog/reconcile'
import { parseConfig } from '../../../lib/config'
import { AGENT_SUBREQUESTS, MAX_BATCH, MAX_SUSPENSIONS, WORKER_SUBREQUESTS } from '../../../lib/watchdog/subrequests'
import { agents } from '../../../schema'
import { startFakeRuntime, type FakeRuntime } from '../../support/fake-runtime'
import { useHarness } from '../../support/harness'
import { BROKEN, engine, QUEUE_KEY, seedAgent } from './helpers'

/**
 * A Worker's 1,000 subrequests hold for every invocation the watchdog makes (lib/watchdog/subrequests.ts): a batch of
 * `MAX_BATCH` agents that all fail, are repaired and mailed, and a sweep page that suspends `MAX_SUSPENSIONS`.
 * What one agent costs is counted here on the embedded stores; the provider's requests inside a repair or a stop
 * (Railway's, at most 2 and 3) and the mail provider's one are what lib/runtime/railway.ts and lib/mail/resend.ts make.
 */
const h = useHarness({ env: { QSTASH_CURRENT_SIGNING_KEY: QUEUE_KEY } })
const fakes: FakeRuntime[] = []
afterAll(() => Promise.all(fakes.map((f) => f.close())))

const RAILWAY_REPAIR = 2
const MAIL = 1
const hits = (f: FakeRuntime) => [...f.hits.values()].reduce((a, b) => a + b, 0)

describe("the watchdog within a Worker's subrequests", () => {
  it('WATCHDOG_BATCH_SIZE is at most MAX_BATCH, and a batch of MAX_BATCH at its worst is within 1,000', () => {
    expect(parseConfig({ WATCHDOG_BATCH_SIZE: String(MAX_BATCH) }).WATCHDOG_BATCH_SIZE).toBe(MAX_BATCH)
    expect(() => parseConfig({ WATCHDOG_BATCH_SIZE: String(MAX_BATCH + 1) })).toThrow()
    expect(MAX_BATCH * AGENT_SUBREQUESTS + 2).toBeLessThanOrEqual(WORKER_SUBREQUESTS)
  })

  it('a batch message may name MAX_BATCH agents, not one more (the route answers 400: error.test.ts)', () => {
    const named = (n: number) => ({ agentIds: Array.from({ length: n }, () => crypto.randomUUID()) })
    expect(WatchdogMessage.safeParse(named(MAX_BATCH)).success).toBe(true)
    expect(WatchdogMessage.safeParse(named(MAX_BATCH + 1)).success).toBe(false)
  })

  it('an agent whose runtime fails and is repaired costs at most 3 runtime requests, 2 kv commands and 1 repair', async () => {
    const runtime = await startFakeRuntime(BROKEN)
    fakes.push(runtime)
    const repairs: string[] = []
    const w = engine(h, { runtimes: { repair: async (t) => void repairs.push(t.agentId) } })
    const owner = await h.seedUser('Limits', `limits-${crypto.randomUUID().slice(0, 8)}@example.com`, { plan: 'network' })
    const ids: string[] = []
    for (let i = 0; i < 5; i++) ids.push((await seedAgent(h, owner, runtime.url)).id)
    // Two failed checks, then the third repairs (WATCHDOG_STARTUP_FAILURE_THRESHOLD 3).
    for (let i = 0; i < 2; i++) {
      expect(await w.check(ids)).toMatchObject({ checked: 5, repairs: 0 })
      w.clock.advance(5_000)
    }
    const requestsBefore = hits(runtime)
    const kvBefore = h.traffic().kvRoundTrips
    expect(await w.check(ids)).toMatchObject({ checked: 5, repairs: 5 })
    const perAgent = { runtime: (hits(runtime) - requestsBefore) / 5, kv: (h.traffic().kvRoundTrips - kvBefore) / 5, repairs: repairs.length / 5 }
    expect(perAgent.runtime).toBeLessThanOrEqual(3)
    expect(perAgent.kv).toBeLessThanOrEqual(2)
    expect(perAgent.repairs).toBe(1)
    expect(perAgent.runtime + perAgent.kv + perAgent.repairs * RAILWAY_REPAIR + MAIL).toBeLessThanOrEqual(AGENT_SUBREQUESTS)
  })

  it('a reconciliation run suspends at most MAX_SUSPENSIONS agents; the next run takes the rest', async () => {
    const stops: string[] = []
    const w = engine(h, { runtimes: { stop: async (t) => void stops.push(t.agentId) } })
    const lapsed = await h.seedUser('Lapsed', `lapsed-${crypto.randomUUID().slice(0, 8)}@example.com`, { plan: null })
    const extra = 3
    await h.db.insert(agents).values(
      Array.from({ length: MAX_SUSPENSIONS + extra }, (_, i) => ({ userId: lapsed.id, name: `lapsed-${i}`, plan: 'solo', status: 'running', runtimeProvider: 'local', runtimeServiceId: `svc-${crypto.randomUUID()}` })),
    )
    const kvBefore = h.traffic().kvRoundTrips
    expect(await reconcileAccess(w.deps, { userIds: [lapsed.id] })).toEqual({ suspended: MAX_SUSPENSIONS, failed: 0 })
    expect(stops).toHaveLength(MAX_SUSPENSIONS)
    expect((h.traffic().kvRoundTrips - kvBefore) / MAX_SUSPENSIONS).toBeLessThanOrEqual(2)
    expect(await reconcileAccess(w.deps, { userIds: [lapsed.id] })).toEqual({ suspended: extra, failed: 0 })
    const left = await h.db.select({ status: agents.status }).from(agents).where(eq(agents.userId, lapsed.id))
    expect(left.every((a) => a.status === 'suspended')).toBe(true)
  })
})
