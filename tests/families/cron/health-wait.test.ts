import { eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { healthWait } from '../../../functions/cron/health-wait'
import { signDelivery } from '../../../lib/queue/sign'
import { HEALTH_WAIT_PATH, HEALTH_WAIT_TIMEOUT_MS, queueHealthWait, type HealthWaitMessage } from '../../../lib/watchdog/health-wait'
import { watchdogDeps } from '../../../lib/watchdog/deps'
import { agents } from '../../../schema'
import { HEALTHY, startFakeRuntime } from '../../support/fake-runtime'
import { useFixture, useHarness } from '../../support/harness'
import { BROKEN, localQueue, QUEUE_KEY, recordingQueue, seedAgent, testClock, transitions } from './helpers'

const healthy = { '/healthz': HEALTHY.healthz, '/readyz': HEALTHY.readyz, '/api/status': HEALTHY.status() }
const HEALTH_WAIT_URL = `http://127.0.0.1:8787${HEALTH_WAIT_PATH}`

const h = useHarness({ env: { QSTASH_CURRENT_SIGNING_KEY: QUEUE_KEY }, plan: 'network' })
const up = useFixture(() => startFakeRuntime(healthy))
const down = useFixture(() => startFakeRuntime(BROKEN))

/** The health wait on the harness's stores with the test's clock and a recording queue. */
function waiter(start?: number) {
  const clock = testClock(start)
  const queue = recordingQueue()
  const deps = watchdogDeps(h.services, { now: clock.now, queue })
  return { clock, queue, run: (msg: HealthWaitMessage) => healthWait(deps, msg) }
}

/** A `starting` agent (as provisioning or a start leaves it) whose runtime is at `url`, and its wait's first message. */
async function starting(url: string | null, clock: { now(): number }) {
  const startedAt = new Date(clock.now() - 1000)
  const agent = await seedAgent(h, h.users.alice, url, { status: 'starting', startedAt })
  const msg: HealthWaitMessage = { agentId: agent.id, startedAt: startedAt.toISOString(), until: clock.now() + HEALTH_WAIT_TIMEOUT_MS }
  return { agent, msg }
}

const stored = async (id: string) => (await h.db.select().from(agents).where(eq(agents.id, id)))[0]

const deliver = async (body: unknown, key = QUEUE_KEY) => {
  const text = JSON.stringify(body)
  return h.web.request(HEALTH_WAIT_URL, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'upstash-signature': await signDelivery(key, HEALTH_WAIT_URL, text) },
    body: text,
  })
}

describe('health wait: happy paths', () => {
  it('a runtime that answers at the first probe: the agent is running at once, with its transition; nothing more is queued', async () => {
    const w = waiter()
    const { agent, msg } = await starting(up.url, w.clock)
    expect(await w.run(msg)).toBe('running')
    const row = await stored(agent.id)
    expect(row).toMatchObject({ status: 'running', statusReason: null, lastSeenAt: new Date(w.clock.now()) })
    expect(await transitions(h, agent.id, 'status')).toEqual(['starting→running'])
    expect(w.queue.published).toEqual([])
  })

  it('a runtime still starting: probed again every 2 s (delayed messages), running as soon as it answers', async () => {
    const w = waiter()
    const fake = await startFakeRuntime(BROKEN)
    try {
      const { agent, msg } = await starting(fake.url, w.clock)
      for (let i = 0; i < 3; i++) {
        expect(await w.run(msg)).toBe('waiting')
        expect(w.queue.published.at(-1)).toEqual({ path: HEALTH_WAIT_PATH, body: msg, opts: { delaySec: 2, retries: 1 } })
        w.clock.advance(2000)
      }
      expect((await stored(agent.id)).status).toBe('starting')
      for (const [path, answer] of Object.entries(healthy)) fake.set(path, answer)
      expect(await w.run(msg)).toBe('running')
      expect((await stored(agent.id)).status).toBe('running')
      expect(w.queue.published).toHaveLength(3)
    } finally {
      await fake.close()
    }
  })

  it('through the queue: a queued wait is delivered signed, probes and records running (no watchdog tick needed)', async () => {
    const startedAt = new Date()
    const agent = await seedAgent(h, h.users.alice, up.url, { status: 'starting', startedAt })
    await queueHealthWait(h.services, agent)
    await localQueue(h).idle()
    expect((await stored(agent.id)).status).toBe('running')
    expect(await transitions(h, agent.id, 'status')).toEqual(['starting→running'])
  })

  it('a setup runtime (up, waiting for its configuration) counts as running, as for the watchdog', async () => {
    const w = waiter()
    const fake = await startFakeRuntime({ '/api/status': { body: { configured: false } } })
    try {
      const { agent, msg } = await starting(fake.url, w.clock)
      expect(await w.run(msg)).toBe('running')
      expect((await stored(agent.id)).status).toBe('running')
    } finally {
      await fake.close()
    }
  })
})

describe('health wait: error paths', () => {
  it('a runtime that never answers: probed at 0, 2, …, 60 s (31 probes), then the wait ends (timed-out) and the agent stays starting for the watchdog', async () => {
    const w = waiter()
    const { agent, msg } = await starting(down.url, w.clock)
    const outcomes: string[] = []
    for (let i = 0; i < 40; i++) {
      const outcome = await w.run(msg)
      outcomes.push(outcome)
      if (outcome !== 'waiting') break
      w.clock.advance(2000)
    }
    expect(outcomes.at(-1)).toBe('timed-out')
    expect(outcomes).toHaveLength(HEALTH_WAIT_TIMEOUT_MS / 2000 + 1)
    expect(w.queue.published).toHaveLength(HEALTH_WAIT_TIMEOUT_MS / 2000)
    expect(down.hits.get('/api/status')).toBeGreaterThanOrEqual(HEALTH_WAIT_TIMEOUT_MS / 2000 + 1)
    expect(await stored(agent.id)).toMatchObject({ status: 'starting' })
    expect(await transitions(h, agent.id, 'status')).toEqual([])
  })

  it('an agent without a runtime URL yet is waited for, not failed', async () => {
    const w = waiter()
    const { agent, msg } = await starting(null, w.clock)
    expect(await w.run(msg)).toBe('waiting')
    expect((await stored(agent.id)).status).toBe('starting')
  })

  it('stale waits do nothing: the agent stopped, started again since, deleted, or an unknown id', async () => {
    const w = waiter()
    const { agent: stopped, msg: m1 } = await starting(up.url, w.clock)
    await h.db.update(agents).set({ status: 'stopped' }).where(eq(agents.id, stopped.id))
    expect(await w.run(m1)).toBe('stale')
    expect((await stored(stopped.id)).status).toBe('stopped')

    const { agent: restarted, msg: m2 } = await starting(up.url, w.clock)
    await h.db.update(agents).set({ startedAt: new Date(w.clock.now() + 5000) }).where(eq(agents.id, restarted.id))
    expect(await w.run(m2)).toBe('stale')
    expect((await stored(restarted.id)).status).toBe('starting')

    const { agent: gone, msg: m3 } = await starting(up.url, w.clock)
    await h.db.delete(agents).where(eq(agents.id, gone.id))
    expect(await w.run(m3)).toBe('stale')
    expect(await w.run({ ...m3, agentId: crypto.randomUUID() })).toBe('stale')
    expect(w.queue.published).toEqual([])
  })

  it('two deliveries at once (a retried message, or the watchdog meanwhile): one records running, once', async () => {
    const w = waiter()
    const { agent, msg } = await starting(up.url, w.clock)
    const outcomes = await Promise.all([w.run(msg), w.run(msg), w.run(msg)])
    expect(outcomes.filter((o) => o === 'running')).toHaveLength(1)
    expect(outcomes.filter((o) => o === 'stale')).toHaveLength(2)
    expect(await transitions(h, agent.id, 'status')).toEqual(['starting→running'])
  })

  it('malformed messages are 400 before anything is read', async () => {
    for (const body of [{}, { agentId: 'a', startedAt: 'yesterday', until: 1 }, { agentId: 'a', startedAt: new Date().toISOString(), until: -1 }, [1]]) {
      const res = await deliver(body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(await res.json()).toMatchObject({ code: 'VALIDATION' })
    }
  })
})

describe('health wait: security', () => {
  it('the receiver takes signed deliveries only: unsigned, forged, or signed for another body is 401 and nothing changes', async () => {
    const startedAt = new Date()
    const agent = await seedAgent(h, h.users.bob, up.url, { status: 'starting', startedAt })
    const msg = { agentId: agent.id, startedAt: startedAt.toISOString(), until: Date.now() + 60_000 }
    const unsigned = await h.web.request(HEALTH_WAIT_URL, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(msg) })
    expect(unsigned.status).toBe(401)
    expect(await unsigned.json()).toEqual({ error: 'Missing queue signature', code: 'SIGNATURE_REQUIRED' })
    const forged = await deliver(msg, 'not-the-key')
    expect(forged.status).toBe(401)
    const swapped = await h.web.request(HEALTH_WAIT_URL, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'upstash-signature': await signDelivery(QUEUE_KEY, HEALTH_WAIT_URL, '{}') },
      body: JSON.stringify(msg),
    })
    expect(swapped.status).toBe(401)
    expect((await stored(agent.id)).status).toBe('starting')
    // The genuine delivery works.
    const res = await deliver(msg)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ ok: true, outcome: 'running' })
  })

  it('a user session cannot call the receiver', async () => {
    const res = await h.web.request(HEALTH_WAIT_URL, { method: 'POST', headers: { 'content-type': 'application/json', cookie: h.users.alice.cookie }, body: '{}' })
    expect(res.status).toBe(401)
  })
})
