import { eq } from 'drizzle-orm'
import { describe, expect, it, vi } from 'vitest'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { LocalQueue } from '../../../infra/local-queue'
import { startServer } from '../../../infra/server'
import { watchdogSettings } from '../../../lib/watchdog/rules'
import { leaseMs } from '../../../lib/watchdog/deps'
import { MAX_BATCH } from '../../../lib/watchdog/subrequests'
import { agents, agentWatchdog } from '../../../schema'
import { HEALTHY, startFakeRuntime } from '../../support/fake-runtime'
import { useFixture, useHarness } from '../../support/harness'
import { BROKEN, deliver, engine, QUEUE_KEY, seedAgent, transitions, watchRow } from './helpers'

// Owners on the unlimited plan: the reconciliation of paid access leaves their agents to the health checks.
const h = useHarness({ env: { QSTASH_CURRENT_SIGNING_KEY: QUEUE_KEY }, plan: 'network' })
const broken = useFixture(() => startFakeRuntime(BROKEN))

describe('bad deliveries', () => {
  it('400 VALIDATION for a batch past its bound, an empty batch or ids of the wrong type', async () => {
    for (const body of [{ agentIds: Array.from({ length: MAX_BATCH + 1 }, (_, i) => `a${i}`) }, { agentIds: [] }, { agentIds: [42] }, { cursor: 'x'.repeat(101) }]) {
      const res = await deliver(h, body)
      expect(res.status, JSON.stringify(body).slice(0, 60)).toBe(400)
      expect(await res.json()).toMatchObject({ code: 'VALIDATION' })
    }
  })

  it('unknown agent ids are a batch with nothing to check', async () => {
    const res = await deliver(h, { agentIds: ['no-such-agent'] })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ ok: true, kind: 'batch', checked: 0, healthy: 0, degraded: 0, repairs: 0, crashLoops: 0 })
  })
})

describe('faults on the runtime side', () => {
  it('a runtime answering 500 garbage, a hanging one and an agent with no URL are degraded with the reason, never a crash of the sweep', { timeout: 20_000 }, async () => {
    const hang = await startFakeRuntime({ '/healthz': { hang: true }, '/readyz': { hang: true }, '/api/status': { hang: true } })
    try {
      const w = engine(h)
      const a = await seedAgent(h, h.users.alice, broken.url)
      const b = await seedAgent(h, h.users.alice, null)
      const c = await seedAgent(h, h.users.bob, 'http://127.0.0.1:1')
      const d = await seedAgent(h, h.users.bob, hang.url)
      expect(await w.check([a.id, b.id, c.id, d.id])).toMatchObject({ checked: 4, healthy: 0, degraded: 4, repairs: 0 })
      expect((await watchRow(h, a.id)).reason).toBe('unreachable: All probes failed: /healthz HTTP 500, /readyz HTTP 500, /api/status HTTP 500')
      expect((await watchRow(h, b.id)).reason).toBe('unreachable: The agent has no runtime URL')
      expect((await watchRow(h, c.id)).reason).toMatch(/^unreachable: All probes failed: \/healthz \w/)
      expect((await watchRow(h, d.id)).reason).toMatch(/^unreachable: All probes failed: \/healthz timeout/)
      // First check ever: degraded, but not counted as a crash (it was never seen healthy).
      expect((await watchRow(h, a.id)).crashTimes).toEqual([])
      expect(await transitions(h, a.id)).toEqual(['∅→degraded'])
      expect(w.queue.published).toEqual([{ path: '/api/cron/watchdog', body: { agentIds: [a.id, b.id, c.id, d.id] }, opts: { delaySec: 5, flowControl: { key: 'watchdog', parallelism: 4 } } }])
    } finally {
      await hang.close()
    }
  })

  it('a repair the provider refuses is recorded as degraded with its reason, and counts as an attempt', async () => {
    // The harness's provider is the real local one: it has no runtime for this agent (404 Runtime not found).
    const w = engine(h)
    const agent = await seedAgent(h, h.users.bob, broken.url)
    for (let i = 0; i < 3; i++) {
      await w.check([agent.id])
      w.clock.advance(5000)
    }
    const row = await watchRow(h, agent.id)
    expect(row).toMatchObject({ state: 'degraded', repairAttempts: 1, consecutiveFailures: 0 })
    expect(row.reason).toBe('Repair 1 of 2 failed: Runtime not found')
    expect(await transitions(h, agent.id)).toEqual(['∅→degraded', 'degraded→degraded'])

    // Three more failures: the second and last attempt; then repairs are exhausted and checks slow to the normal interval.
    for (let i = 0; i < 3; i++) {
      await w.check([agent.id])
      w.clock.advance(5000)
    }
    expect(await watchRow(h, agent.id)).toMatchObject({ repairAttempts: 2, reason: 'Repair 2 of 2 failed: Runtime not found' })
    for (let i = 0; i < 3; i++) {
      await w.check([agent.id])
      w.clock.advance(5000)
    }
    const exhausted = await watchRow(h, agent.id)
    expect(exhausted).toMatchObject({ state: 'degraded', repairAttempts: 2 })
    expect(exhausted.reason).toMatch(/^Repair attempts exhausted \(2\): 3 failed probes/)
    expect(exhausted.nextCheckAt!.getTime() - (w.clock.now() - 5000)).toBe(120_000)
  })
})

describe('the owner acts on an agent while its batch runs', () => {
  // A runtime that fails slowly: the batch is still probing when the test changes the agent's row.
  const SLOW_BROKEN = Object.fromEntries(Object.entries(BROKEN).map(([path, a]) => [path, { ...a, delayMs: 400 }]))
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

  it('an agent deleted between lease and record is left out; the others in the batch are recorded', async () => {
    const slow = await startFakeRuntime(SLOW_BROKEN)
    const healthy = await startFakeRuntime({ '/healthz': HEALTHY.healthz, '/readyz': HEALTHY.readyz, '/api/status': HEALTHY.status() })
    try {
      const w = engine(h)
      const doomed = await seedAgent(h, h.users.alice, slow.url)
      const kept = await seedAgent(h, h.users.alice, healthy.url)
      const pending = w.check([doomed.id, kept.id])
      await sleep(150)
      await h.db.delete(agents).where(eq(agents.id, doomed.id))
      expect(await pending).toMatchObject({ checked: 1, healthy: 1, degraded: 0 })
      expect(await watchRow(h, kept.id)).toMatchObject({ state: 'healthy', leaseUntil: null, leaseOwner: null })
      expect(await transitions(h, kept.id)).toEqual(['∅→healthy'])
      expect(await watchRow(h, doomed.id)).toBeUndefined()
      // Nothing re-queued for the deleted agent.
      expect(w.queue.published).toEqual([])
    } finally {
      await slow.close()
      await healthy.close()
    }
  })

  it('a batch leases its agents for the whole batch at its worst: ceil(batch / concurrency) × (check at its longest + repair) + margin', async () => {
    // Defaults: 100 agents, 25 at once: 4 rounds of a 10 s check (/api/status, then the legacy probes) and a 30 s repair, plus 30 s.
    expect(leaseMs(watchdogSettings(h.services.config))).toBe(190_000)
    expect(leaseMs({ batchSize: MAX_BATCH, concurrency: 1 })).toBe(MAX_BATCH * 40_000 + 30_000)
    const slow = await startFakeRuntime(SLOW_BROKEN)
    try {
      const w = engine(h)
      const agent = await seedAgent(h, h.users.bob, slow.url)
      const pending = w.check([agent.id])
      await sleep(150)
      // Held while the batch probes, for the computed time.
      expect((await watchRow(h, agent.id)).leaseUntil).toEqual(new Date(w.clock.now() + 190_000))
      await pending
      expect((await watchRow(h, agent.id)).leaseUntil).toBeNull()
    } finally {
      await slow.close()
    }
  })

  it('an agent its owner stopped during the batch is not repaired, nor restarted; its lease is released', async () => {
    const slow = await startFakeRuntime(SLOW_BROKEN)
    try {
      const repairs: string[] = []
      const w = engine(h, { runtimes: { repair: async (t) => void repairs.push(t.agentId) } })
      const agent = await seedAgent(h, h.users.bob, slow.url)
      // Failed twice already: this check's failed probe asks for a repair.
      await h.db.insert(agentWatchdog).values({ agentId: agent.id, userId: agent.userId, state: 'degraded', consecutiveFailures: 2, lastProbeAt: new Date(w.clock.now() - 5000), nextCheckAt: new Date(w.clock.now()) })
      const pending = w.check([agent.id])
      await sleep(150)
      await h.db.update(agents).set({ status: 'stopped', statusReason: 'stopped by request' }).where(eq(agents.id, agent.id))
      expect(await pending).toMatchObject({ checked: 0, repairs: 0 })
      expect(repairs).toEqual([])
      const [row] = await h.db.select().from(agents).where(eq(agents.id, agent.id))
      expect(row.status).toBe('stopped')
      expect(await watchRow(h, agent.id)).toMatchObject({ state: 'degraded', consecutiveFailures: 2, repairAttempts: 0, leaseUntil: null, leaseOwner: null })
      expect(await transitions(h, agent.id)).toEqual([])
    } finally {
      await slow.close()
    }
  })
})

describe('the schedule', () => {
  it('the server registers the watchdog cron at start, every 2 minutes, on /api/cron/watchdog', async () => {
    const schedule = vi.spyOn(LocalQueue.prototype, 'schedule')
    const dataDir = mkdtempSync(join(tmpdir(), 'watchdog-schedule-'))
    const server = await startServer({ PORT: '0', BACKEND_PORT: '0', DATA_DIR: dataDir, SESSION_SECRET: 'schedule-test', LOG_REQUESTS: '0' })
    try {
      expect(schedule).toHaveBeenCalledWith('watchdog', '/api/cron/watchdog', '*/2 * * * *', {})
      expect(schedule).toHaveBeenCalledWith('heartbeat', '/api/cron/heartbeat', '*/15 * * * *', {})
      // Without Mux there is nothing for the radio expiry sweep to do: not scheduled (tests/families/radio/unconfigured.test.ts).
      expect(schedule).not.toHaveBeenCalledWith('radio-expiry-sweep', expect.anything(), expect.anything(), expect.anything())
      expect(await Promise.all(schedule.mock.results.map((r) => r.value))).toEqual([{ scheduleId: 'watchdog' }, { scheduleId: 'heartbeat' }, { scheduleId: 'chat-queued-sweep' }])
    } finally {
      schedule.mockRestore()
      await server.close()
      rmSync(dataDir, { recursive: true, force: true })
    }
  }, 60_000)
})
