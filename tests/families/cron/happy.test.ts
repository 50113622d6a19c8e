import { eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { runtimeTarget } from '../../../lib/agents/access'
import { probeKey } from '../../../lib/agents/instance'
import { provisionAgent } from '../../../lib/agents/provision'
import { probeRuntime } from '../../../lib/runtime/probe'
import { agents, agentWatchdog } from '../../../schema'
import { HEALTHY, startFakeRuntime, type FakeRuntime } from '../../support/fake-runtime'
import { useFixture, useHarness } from '../../support/harness'
import { watchdogDeps } from '../../../lib/watchdog/deps'
import { sweep, type SweepResult } from '../../../functions/cron/watchdog/sweep'
import { BROKEN, crashMails, deliver, engine, localQueue, QUEUE_KEY, recordingQueue, seedAgent, testClock, transitions, watchRow } from './helpers'
import { waitFor } from '../../support/wait'

const healthy = { '/healthz': HEALTHY.healthz, '/readyz': HEALTHY.readyz, '/api/status': HEALTHY.status() }

// Owners on the unlimited plan: the reconciliation of paid access leaves their agents to the health checks.
const h = useHarness({ env: { QSTASH_CURRENT_SIGNING_KEY: QUEUE_KEY }, plan: 'network' })
const fake = useFixture(() => startFakeRuntime(healthy))

describe('the cron sweep through the queue', () => {
  it('publishes the due agents in batches, which the queue delivers back signed and the watchdog checks', async () => {
    const agent = await seedAgent(h, h.users.alice, fake.url, { status: 'starting' })
    const res = await deliver(h, {})
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body).toMatchObject({ ok: true, kind: 'sweep', more: false })
    expect(body.due).toBeGreaterThanOrEqual(1)
    expect(body.batches).toBeGreaterThanOrEqual(1)
    await localQueue(h).idle()

    const row = await watchRow(h, agent.id)
    expect(row).toMatchObject({ state: 'healthy', reason: null, consecutiveFailures: 0, repairAttempts: 0, leaseUntil: null, leaseOwner: null })
    expect(row.nextCheckAt!.getTime() - row.lastProbeAt!.getTime()).toBe(120_000)
    expect(await transitions(h, agent.id)).toEqual(['∅→healthy'])
    // A runtime that answers has finished starting.
    const [stored] = await h.db.select().from(agents).where(eq(agents.id, agent.id))
    expect(stored.status).toBe('running')
    expect(stored.lastSeenAt).not.toBeNull()
    expect(await transitions(h, agent.id, 'status')).toEqual(['starting→running'])

    // Checked: not due again before its interval, so the next sweep leaves it alone.
    const again = await deliver(h, {})
    expect(await again.json()).toMatchObject({ kind: 'sweep' })
    await localQueue(h).idle()
    expect((await watchRow(h, agent.id)).lastProbeAt).toEqual(row.lastProbeAt)
  })
})

describe('healthy → degraded → repaired, with a real local runtime and the test clock', () => {
  it('repairs a crashed runtime after three failed probes, through the provider, and it comes back healthy', async () => {
    const agent = await provisionAgent(h.services, { userId: h.users.bob.id, plan: 'solo', name: 'watched' })
    const w = engine(h)
    // The runtime may still be starting (its /readyz waits 300 ms): the first check comes once it is up.
    await waitFor(() => up(agent.runtimeUrl!), { ms: 5000, every: 100 })
    expect((await w.check([agent.id])).healthy).toBe(1)
    expect((await watchRow(h, agent.id)).state).toBe('healthy')

    // The process dies behind the platform's back: the record still says running.
    await h.services.runtimes.stop(await runtimeTarget(h.services.config, (await h.db.select().from(agents).where(eq(agents.id, agent.id)))[0]))
    w.clock.advance(120_000)
    w.queue.published.length = 0
    expect(await w.check([agent.id])).toMatchObject({ checked: 1, degraded: 1, repairs: 0 })
    let row = await watchRow(h, agent.id)
    expect(row).toMatchObject({ state: 'degraded', consecutiveFailures: 1 })
    expect(row.reason).toMatch(/^unreachable: All probes failed/)
    expect(row.crashTimes).toEqual([w.clock.now()])
    expect(row.nextCheckAt!.getTime() - w.clock.now()).toBe(5000)
    // Re-probed by a delayed message after the degraded interval.
    expect(w.queue.published).toEqual([{ path: '/api/cron/watchdog', body: { agentIds: [agent.id] }, opts: { delaySec: 5, flowControl: { key: 'watchdog', parallelism: 4 } } }])

    // Not due before those 5 s: an early delivery does nothing.
    w.clock.advance(4000)
    expect((await w.check([agent.id])).checked).toBe(0)
    w.clock.advance(1000)
    expect(await w.check([agent.id])).toMatchObject({ checked: 1, degraded: 1, repairs: 0 })
    w.clock.advance(5000)
    // A probe answer cached by the instance routes is dropped by the repair, as by any lifecycle call.
    await h.services.kv.set(probeKey(agent.id), { status: 'running' }, { ttlMs: 60_000 })
    expect(await w.check([agent.id])).toMatchObject({ checked: 1, repairs: 1 })
    expect(await h.services.kv.get(probeKey(agent.id))).toBeNull()
    // The repair is recorded as runLifecycle records one: the agent is starting again.
    const [repaired] = await h.db.select().from(agents).where(eq(agents.id, agent.id))
    expect(repaired).toMatchObject({ status: 'starting', startedAt: new Date(w.clock.now()) })
    row = await watchRow(h, agent.id)
    expect(row).toMatchObject({ state: 'repairing', repairAttempts: 1, consecutiveFailures: 0 })
    expect(row.reason).toMatch(/^Repair 1 of 2 after 3 failed probes/)

    // The repair started the process again (for real): once it is up, the next check finds it healthy.
    await waitFor(() => up(agent.runtimeUrl!), { ms: 5000, every: 100 })
    w.clock.advance(5000)
    expect((await w.check([agent.id])).healthy).toBe(1)
    row = await watchRow(h, agent.id)
    expect(row).toMatchObject({ state: 'healthy', reason: null, consecutiveFailures: 0, repairAttempts: 0 })
    expect(await transitions(h, agent.id)).toEqual(['∅→healthy', 'healthy→degraded', 'degraded→repairing', 'repairing→healthy'])
    // The watchdog's status transitions (at the test clock's times; provisioning's, and its health wait's if that saw
    // the runtime first, at the real time: compared as a set). The first `starting→running` is recorded once, by either.
    expect((await transitions(h, agent.id, 'status')).filter((t) => !t.includes('provisioning')).sort()).toEqual(['starting→running', 'running→starting', 'starting→running'].sort())
  }, 30_000)
})

describe('crash loop', () => {
  it('after three crashes in the window: crash_loop, the owner mailed once, no more repairs', async () => {
    const runtime = await startFakeRuntime(healthy)
    const repairs: string[] = []
    // The provider's repair brings the (fake) runtime back, as a redeploy would.
    const w = engine(h, { runtimes: { repair: async (t) => void (repairs.push(t.agentId), setAnswers(runtime, healthy)) } })
    try {
      const agent = await seedAgent(h, h.users.alice, runtime.url)
      expect((await w.check([agent.id])).healthy).toBe(1)

      for (let crash = 1; crash <= 2; crash++) {
        setAnswers(runtime, BROKEN)
        w.clock.advance(120_000)
        for (let probe = 1; probe <= 3; probe++) {
          await w.check([agent.id])
          w.clock.advance(5000)
        }
        expect(repairs).toHaveLength(crash)
        expect((await w.check([agent.id])).healthy).toBe(1)
      }
      expect((await watchRow(h, agent.id)).crashTimes).toHaveLength(2)

      // The third crash inside five minutes.
      setAnswers(runtime, BROKEN)
      w.clock.advance(120_000)
      expect(await w.check([agent.id])).toMatchObject({ checked: 1, crashLoops: 1, repairs: 0, degraded: 0 })
      const row = await watchRow(h, agent.id)
      expect(row.state).toBe('crash_loop')
      expect(row.reason).toMatch(/^3 crashes within 5 min: repairs stopped \(unreachable: /)
      expect(row.ownerNotifiedAt).not.toBeNull()
      expect(row.nextCheckAt!.getTime() - w.clock.now()).toBe(120_000)
      const mails = await crashMails(h, h.users.alice.email)
      expect(mails).toHaveLength(1)
      expect(mails[0].subject).toBe(`Your agent "${agent.name}" keeps crashing`)
      expect(mails[0].text).toContain('crashed 3 times within 5 minutes')

      // Still failing, check after check: no repair, no second mail.
      for (let i = 0; i < 4; i++) {
        w.clock.advance(120_000)
        expect(await w.check([agent.id])).toMatchObject({ checked: 1, repairs: 0, crashLoops: 0 })
      }
      expect(repairs).toHaveLength(2)
      expect(await crashMails(h, h.users.alice.email)).toHaveLength(1)
      expect((await watchRow(h, agent.id)).state).toBe('crash_loop')
      expect(await transitions(h, agent.id)).toEqual([
        '∅→healthy',
        'healthy→degraded', 'degraded→repairing', 'repairing→healthy',
        'healthy→degraded', 'degraded→repairing', 'repairing→healthy',
        'healthy→crash_loop',
      ])

      // It recovers: healthy again, and checked at the normal interval.
      setAnswers(runtime, healthy)
      w.clock.advance(120_000)
      expect((await w.check([agent.id])).healthy).toBe(1)
      expect((await watchRow(h, agent.id)).state).toBe('healthy')
    } finally {
      await runtime.close()
    }
  })
})

function setAnswers(runtime: FakeRuntime, answers: Record<string, unknown>) {
  for (const [path, answer] of Object.entries(answers)) runtime.set(path, answer as never)
}

const up = async (url: string) => ['running', 'healthy'].includes((await probeRuntime(url)).status)


describe('a sweep past one page', () => {
  it('pages by keyset: its continuations name every due agent exactly once, and no agent that is not due', async () => {
    const clock = testClock(Date.parse('2026-03-02T10:02:07Z'))
    const at = (ms: number) => new Date(clock.now() + ms)
    const due: string[] = []
    // 50 agents: never watched, due, not yet due, leased elsewhere, lease expired, stopped (never swept).
    for (let i = 0; i < 50; i++) {
      const kind = i % 6
      const agent = await seedAgent(h, h.users.alice, null, kind === 5 ? { status: 'stopped' } : {})
      const row = { agentId: agent.id, userId: agent.userId }
      if (kind === 1) await h.db.insert(agentWatchdog).values({ ...row, nextCheckAt: at(-1000) })
      if (kind === 2) await h.db.insert(agentWatchdog).values({ ...row, nextCheckAt: at(60_000) })
      if (kind === 3) await h.db.insert(agentWatchdog).values({ ...row, nextCheckAt: at(-1000), leaseUntil: at(60_000), leaseOwner: 'elsewhere' })
      if (kind === 4) await h.db.insert(agentWatchdog).values({ ...row, nextCheckAt: null, leaseUntil: at(-1000), leaseOwner: 'gone' })
      if (kind === 0 || kind === 1 || kind === 4) due.push(agent.id)
    }
    const queue = recordingQueue()
    // One agent a batch: a page is 20 agents, so the 26 due take a continuation.
    const deps = watchdogDeps(h.services, { now: clock.now, queue, config: { ...h.services.config, WATCHDOG_BATCH_SIZE: 1 } })
    const named: string[] = []
    const pages: SweepResult[] = []
    let next: { cursor?: string; run?: string } = {}
    for (let i = 0; i < 10; i++) {
      queue.published.length = 0
      pages.push(await sweep(deps, next.cursor, next.run))
      named.push(...queue.published.flatMap((p) => (p.body.agentIds as string[] | undefined) ?? []))
      const continuation = queue.published.find((p) => p.body.cursor)
      if (!continuation) break
      next = continuation.body as typeof next
    }
    expect(pages.map((p) => [p.due, p.more])).toEqual([
      [20, true],
      [due.length - 20, false],
    ])
    expect(named).toHaveLength(due.length)
    expect([...named].sort()).toEqual([...due].sort())
  })

  it('hands the rest to a {cursor, run} continuation whose deduplication id a retried delivery repeats', async () => {
    for (let i = 0; i < 21; i++) await seedAgent(h, h.users.alice, null)
    const clock = testClock(Date.parse('2026-03-02T10:02:07Z'))
    const queue = recordingQueue()
    // One agent a batch: a page is 20 agents.
    const deps = watchdogDeps(h.services, { now: clock.now, queue, config: { ...h.services.config, WATCHDOG_BATCH_SIZE: 1 } })
    expect(await sweep(deps)).toMatchObject({ due: 20, batches: 20, more: true })
    const first = queue.published.filter((p) => p.body.cursor)
    expect(first).toHaveLength(1)
    const { cursor, run } = first[0].body
    expect(run).toBe('2026-03-02T10:02')
    expect(first[0].opts).toEqual({ deduplicationId: `_api_cron_watchdog|2026-03-02T10:02|${cursor}` })
    // The same delivery retried (later, within the cron's period): the same continuation id, so no second chain.
    clock.advance(30_000)
    queue.published.length = 0
    await sweep(deps)
    expect(queue.published.filter((p) => p.body.cursor).map((p) => p.opts?.deduplicationId)).toEqual([first[0].opts!.deduplicationId])
    // The continuation carries the run on to its own pages; the next cron run is another chain.
    queue.published.length = 0
    await sweep(deps, cursor, run)
    expect(queue.published.every((p) => !p.body.cursor || p.body.run === run)).toBe(true)
    clock.advance(120_000)
    queue.published.length = 0
    await sweep(deps)
    expect(queue.published.find((p) => p.body.cursor)?.body.run).toBe('2026-03-02T10:04')
  })
})
