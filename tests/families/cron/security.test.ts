import { describe, expect, it } from 'vitest'
import { HEALTHY, startFakeRuntime } from '../../support/fake-runtime'
import { useFixture, useHarness } from '../../support/harness'
import { agentWatchdog } from '../../../schema'
import { BROKEN, deliver, engine, QUEUE_KEY, seedAgent, transitions, watchRow, WATCHDOG_URL } from './helpers'

// Owners on the unlimited plan: the reconciliation of paid access leaves their agents to the health checks.
const h = useHarness({ env: { QSTASH_CURRENT_SIGNING_KEY: QUEUE_KEY }, plan: 'network' })
const down = useFixture(() => startFakeRuntime(BROKEN))

describe('the receiver takes signed deliveries only', () => {
  it('401 without a signature, and with one made with another key or for another body', async () => {
    const agent = await seedAgent(h, h.users.alice, down.url)
    const unsigned = await h.web.request(WATCHDOG_URL, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    expect(unsigned.status).toBe(401)
    expect(await unsigned.json()).toEqual({ error: 'Missing queue signature', code: 'SIGNATURE_REQUIRED' })

    const forged = await deliver(h, { agentIds: [agent.id] }, 'not-the-key')
    expect(forged.status).toBe(401)
    expect(await forged.json()).toEqual({ error: 'Invalid queue signature', code: 'INVALID_SIGNATURE' })

    // A genuine signature of another body does not carry over.
    const { signDelivery } = await import('../../../lib/queue/sign')
    const swapped = await h.web.request(WATCHDOG_URL, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'upstash-signature': await signDelivery(QUEUE_KEY, WATCHDOG_URL, '{}') },
      body: JSON.stringify({ agentIds: [agent.id] }),
    })
    expect(swapped.status).toBe(401)
    // Nothing was probed or recorded.
    expect(down.hits.size).toBe(0)
    expect(await watchRow(h, agent.id)).toBeUndefined()
  })
})

describe('overlapping sweeps never act on one agent twice', () => {
  it('two batches naming the same failing agent at its repair threshold: one repair, one transition', async () => {
    const repairs: string[] = []
    const slowRepair = { repair: async (t: { agentId: string }) => void (repairs.push(t.agentId), await new Promise((r) => setTimeout(r, 50))) }
    const w = engine(h, { runtimes: slowRepair })
    const agents = await Promise.all([0, 1, 2].map(() => seedAgent(h, h.users.bob, down.url)))
    const ids = agents.map((a) => a.id)
    // Each one failed twice already: the next failed probe asks for a repair.
    await h.db.insert(agentWatchdog).values(agents.map((a) => ({ agentId: a.id, userId: a.userId, state: 'degraded', consecutiveFailures: 2, lastProbeAt: new Date(w.clock.now() - 5000), nextCheckAt: new Date(w.clock.now()) })))

    const results = await Promise.all([w.check(ids), w.check([...ids].reverse()), w.check(ids)])
    expect(results.reduce((n, r) => n + r.checked, 0)).toBe(3)
    expect(results.reduce((n, r) => n + r.repairs, 0)).toBe(3)
    expect(repairs.sort()).toEqual([...ids].sort())
    for (const id of ids) {
      expect(await watchRow(h, id)).toMatchObject({ state: 'repairing', repairAttempts: 1, leaseUntil: null })
      expect(await transitions(h, id)).toEqual(['degraded→repairing'])
    }

    // Two sweeps at once: each publishes what is due; the batches then overlap and still repair nothing twice.
    w.clock.advance(5000)
    w.queue.published.length = 0
    await Promise.all([w.sweep(), w.sweep()])
    const batches = w.queue.published.filter((p) => p.body.agentIds).map((p) => p.body.agentIds as string[])
    const mine = batches.map((b) => b.filter((id) => ids.includes(id)))
    expect(mine.flat().sort()).toEqual([...ids, ...ids].sort())
    await Promise.all(mine.map((b) => w.check(b)))
    // One more failed probe each (the second batch found them leased or no longer due).
    for (const id of ids) expect(await watchRow(h, id)).toMatchObject({ state: 'repairing', consecutiveFailures: 1, repairAttempts: 1 })
    expect(repairs).toHaveLength(3)
  })

  it('an agent leased by another batch (lease not expired) is skipped; an expired lease is taken over', async () => {
    const w = engine(h)
    const agent = await seedAgent(h, h.users.alice, down.url)
    await h.db.insert(agentWatchdog).values({ agentId: agent.id, userId: agent.userId, leaseOwner: 'other', leaseUntil: new Date(w.clock.now() + 30_000) })
    expect((await w.check([agent.id])).checked).toBe(0)
    expect(await watchRow(h, agent.id)).toMatchObject({ leaseOwner: 'other', lastProbeAt: null })
    w.clock.advance(30_000)
    expect((await w.check([agent.id])).checked).toBe(1)
    expect(await watchRow(h, agent.id)).toMatchObject({ leaseOwner: null, leaseUntil: null, state: 'degraded' })
  })
})

describe('what the watchdog leaves alone', () => {
  it('stopped, errored, provisioning and template agents are neither swept nor checked', async () => {
    const up = await startFakeRuntime({ '/healthz': HEALTHY.healthz, '/readyz': HEALTHY.readyz, '/api/status': HEALTHY.status() })
    try {
      const w = engine(h)
      const idle = await Promise.all(['stopped', 'error', 'provisioning', 'template'].map((status) => seedAgent(h, h.users.alice, up.url, { status })))
      await w.sweep()
      const published = w.queue.published.flatMap((p) => (p.body.agentIds ?? []) as string[])
      for (const a of idle) expect(published).not.toContain(a.id)
      expect((await w.check(idle.map((a) => a.id))).checked).toBe(0)
      expect(up.hits.size).toBe(0)
    } finally {
      await up.close()
    }
  })
})
