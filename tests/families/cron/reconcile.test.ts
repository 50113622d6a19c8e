import { and, asc, eq } from 'drizzle-orm'
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest'
import { provisionAgent } from '../../../lib/agents/provision'
import { reconcileAccess } from '../../../functions/cron/watchdog/reconcile'
import type { RuntimeTarget } from '../../../lib/runtime/provider'
import { agentEvents, agents, users, type Agent } from '../../../schema'
import { setPlan } from '../../auth/helpers'
import { startFakeRuntime, type FakeRuntime } from '../../support/fake-runtime'
import { type SeededUser, useHarness } from '../../support/harness'
import { call } from '../../support/requests'
import { signedEvent, stripeEvent } from '../../support/stripe-server'
import { answers } from '../agents/helpers'
import { BROKEN, engine, localQueue, QUEUE_KEY, seedAgent, transitions, watchRow } from './helpers'
import { waitFor } from '../../support/wait'

/**
 * Paid access over time, reconciled (functions/cron/watchdog/reconcile.ts): the watchdog's sweep (and a payment event, at
 * once) stops the runtimes of users whose paid access ended and marks their agents `suspended`, deleting nothing;
 * a plan with fewer agents suspends the newest beyond it; paying again lets `start` resume them. The watchdog's
 * clock is the test's; the API's is moved with fake timers (Date only).
 */
const DAY = 24 * 60 * 60 * 1000
const WEBHOOK_SECRET = 'whsec_reconcile_test'
const PLAN_REQUIRED = { error: 'Paid plan required', code: 'PLAN_REQUIRED' }

const fakes: FakeRuntime[] = []
const h = useHarness({ env: { QSTASH_CURRENT_SIGNING_KEY: QUEUE_KEY, PROVISIONING_ENABLED: '1', STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET } })
afterAll(() => Promise.all(fakes.map((f) => f.close())))
afterEach(() => vi.useRealTimers())

let n = 0
const fresh = (plan: string | null = null) => h.seedUser(`R${++n}`, `reconcile-${n}-${crypto.randomUUID().slice(0, 8)}@example.com`, { plan })
const stored = async (id: string) => (await h.db.select().from(agents).where(eq(agents.id, id)))[0]
const ofUser = (userId: string) => h.db.select().from(agents).where(eq(agents.userId, userId)).orderBy(asc(agents.createdAt))


/** A signed Stripe event delivered to the webhook, as Stripe sends it. */
async function webhook(type: string, object: unknown) {
  const signed = signedEvent(WEBHOOK_SECRET, stripeEvent(type, object))
  const res = await h.web.request('/api/stripe/webhook', { method: 'POST', headers: signed.headers, body: signed.payload })
  expect(res.status).toBe(200)
  return ((await res.json()) as { outcome: string }).outcome
}

/** The user's Stripe subscription, as the webhook's events carry it. */
const subscription = (user: SeededUser, id: string, status: string, plan: string) => ({
  id,
  object: 'subscription',
  customer: `cus_${user.id.slice(0, 8)}`,
  status,
  metadata: { userId: user.id, plan },
  items: { object: 'list', data: [], has_more: false, url: '/v1/subscription_items' },
})

describe('the trial ends: the sweep stops the runtime within one interval and suspends the agent; paying again resumes it', () => {
  it('runs through the real local runtime provider, the watchdog clock and the API at the same time', async () => {
    const start = Date.now()
    const w = engine(h, { start })
    const user = await fresh()
    await h.db.update(users).set({ trialStartedAt: new Date(start), trialEndsAt: new Date(start + 7 * DAY) }).where(eq(users.id, user.id))
    const agent = await provisionAgent(h.services, { userId: user.id, plan: 'solo', name: 'trial-runtime' })
    await waitFor(() => answers(agent.runtimeUrl!), { ms: 6000, every: 100, what: 'the runtime answers' })
    await localQueue(h).idle() // the health wait records it running (else it may land between two steps below)
    expect((await stored(agent.id)).status).toBe('running')

    // On the trial: nothing to reconcile; the agent is due its first check.
    expect(await w.sweep()).toMatchObject({ suspended: 0 })
    expect(w.queue.published.flatMap((p) => p.body.agentIds ?? [])).toContain(agent.id)

    // The trial ends; the next sweep (one cron period later) stops the runtime and suspends the agent.
    w.clock.advance(7 * DAY + 60_000)
    w.queue.published.length = 0
    expect(await w.sweep()).toMatchObject({ suspended: 1 })
    expect(await answers(agent.runtimeUrl!)).toBe(false)
    const suspended = await stored(agent.id)
    expect(suspended).toMatchObject({ status: 'suspended', runtimeServiceId: agent.runtimeServiceId, runtimeUrl: agent.runtimeUrl })
    expect(suspended.statusReason).toMatch(/^Paid access ended/)
    const [event] = await h.db.select().from(agentEvents).where(and(eq(agentEvents.agentId, agent.id), eq(agentEvents.toState, 'suspended')))
    expect(event).toMatchObject({ kind: 'status', fromState: 'running', reason: suspended.statusReason, at: new Date(w.clock.now()) })
    // Not watched any more: never published for a check, never repaired; a second sweep changes nothing.
    expect(w.queue.published.flatMap((p) => p.body.agentIds ?? [])).not.toContain(agent.id)
    expect((await w.check([agent.id])).checked).toBe(0)
    expect(await w.sweep()).toMatchObject({ suspended: 0 })

    // The API at the same moment: using it is 402 (a suspended agent too); reading and stop stay open.
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(w.clock.now())
    for (const action of ['start', 'restart', 'repair']) {
      const res = await call(h, 'POST', `/api/agents/${agent.id}/${action}`, { user })
      expect(res.status, action).toBe(402)
      expect(await res.json()).toEqual(PLAN_REQUIRED)
    }
    const stop = await call(h, 'POST', `/api/agents/${agent.id}/stop`, { user })
    expect(stop.status).toBe(200)
    expect((await stop.json()).status).toBe('suspended')
    expect((await (await call(h, 'GET', `/api/agents/${agent.id}`, { user })).json()).status).toBe('suspended')

    // Paid again: restart is refused until it is started; start resumes it, counted against the plan.
    await setPlan(h.db, user.id, 'solo', 'sub_after_trial')
    const early = await call(h, 'POST', `/api/agents/${agent.id}/restart`, { user })
    expect(early.status).toBe(409)
    expect(await early.json()).toEqual({ error: 'Agent suspended: start it again', code: 'INVALID_TRANSITION' })
    // Real timers from here: the start queues its health wait on the in-process queue's timers.
    vi.useRealTimers()
    const resumed = await call(h, 'POST', `/api/agents/${agent.id}/start`, { user })
    expect(resumed.status).toBe(200)
    expect((await resumed.json()).status).toBe('starting')
    await waitFor(() => answers(agent.runtimeUrl!), { ms: 6000, every: 100, what: 'the runtime answers again' })
    await localQueue(h).idle() // the health wait: running once the runtime answers
    // (The watchdog's transition is at the test clock's time, the API's at the database's: compared as a set.)
    expect((await transitions(h, agent.id, 'status')).sort()).toEqual(
      ['∅→provisioning', 'provisioning→starting', 'starting→running', 'running→suspended', 'suspended→starting', 'starting→running'].sort(),
    )
    await h.services.runtimes.delete({ agentId: agent.id, name: `agent-${agent.id}`, serviceId: agent.runtimeServiceId, url: agent.runtimeUrl, gatewayToken: null })
  }, 30_000)
})

describe('a subscription canceled by a signed Stripe webhook', () => {
  it('is reconciled at once through the queue: runtime stopped, agents suspended, nothing deleted; start is 402', async () => {
    const user = await fresh('collective')
    await h.db.update(users).set({ subscriptionId: 'sub_cancel_me', stripeCustomerId: `cus_${user.id.slice(0, 8)}` }).where(eq(users.id, user.id))
    const agent = await provisionAgent(h.services, { userId: user.id, plan: 'collective', name: 'paid-runtime' })
    const idle = await seedAgent(h, user, null, { status: 'stopped', name: 'idle' })
    const blueprint = await seedAgent(h, user, null, { status: 'template', name: 'blueprint' })
    await waitFor(() => answers(agent.runtimeUrl!), { ms: 6000, every: 100, what: 'the runtime answers' })

    expect(await webhook('customer.subscription.deleted', subscription(user, 'sub_cancel_me', 'canceled', 'collective'))).toBe('applied')
    await localQueue(h).idle()
    expect(await answers(agent.runtimeUrl!)).toBe(false)
    const after = await ofUser(user.id)
    expect(after.map((a) => [a.name, a.status])).toEqual([
      ['paid-runtime', 'suspended'],
      ['idle', 'suspended'],
      ['blueprint', 'template'],
    ])
    expect(after.map((a) => a.id).sort()).toEqual([agent.id, idle.id, blueprint.id].sort())
    const res = await call(h, 'POST', `/api/agents/${agent.id}/start`, { user })
    expect(res.status).toBe(402)
    expect(await res.json()).toEqual(PLAN_REQUIRED)
    await h.services.runtimes.delete({ agentId: agent.id, name: `agent-${agent.id}`, serviceId: agent.runtimeServiceId, url: agent.runtimeUrl, gatewayToken: null })
  }, 30_000)
})

describe('a plan with fewer agents suspends the newest beyond it', () => {
  /** Three agents made a minute apart, each on its own fake runtime, and a template (which holds no place). */
  async function threeAgents(user: SeededUser) {
    const made: Agent[] = []
    for (let i = 0; i < 3; i++) {
      const runtime = await startFakeRuntime({})
      fakes.push(runtime)
      made.push(await seedAgent(h, user, runtime.url, { name: `agent-${i}`, createdAt: new Date(Date.now() - (3 - i) * 60_000) }))
    }
    await seedAgent(h, user, null, { status: 'template', name: 'blueprint', createdAt: new Date(Date.now() - 10 * 60_000) })
    return made
  }

  it('in the sweep: collective → solo stops and suspends the two newest; their start is 429 while the plan is full', async () => {
    const user = await fresh('collective')
    const [oldest, middle, newest] = await threeAgents(user)
    const stopped: string[] = []
    const w = engine(h, { start: Date.now(), runtimes: { stop: async (t: RuntimeTarget) => void stopped.push(t.agentId) } })
    expect(await w.sweep()).toMatchObject({ suspended: 0 })

    await setPlan(h.db, user.id, 'solo', 'sub_downgraded')
    expect(await w.sweep()).toMatchObject({ suspended: 2 })
    expect(stopped.sort()).toEqual([middle.id, newest.id].sort())
    expect((await ofUser(user.id)).map((a) => [a.name, a.status])).toEqual([
      ['blueprint', 'template'],
      ['agent-0', 'running'],
      ['agent-1', 'suspended'],
      ['agent-2', 'suspended'],
    ])
    expect((await stored(newest.id)).statusReason).toBe('The solo plan allows 1 agent: the newest beyond it are suspended')

    const full = await call(h, 'POST', `/api/agents/${newest.id}/start`, { user })
    expect(full.status).toBe(429)
    expect(await full.json()).toMatchObject({ code: 'AGENT_LIMIT', limit: 1, plan: 'solo' })
    expect((await stored(newest.id)).status).toBe('suspended')
    void oldest
  })

  it('from the webhook that changes the plan: the newest beyond it are suspended at once', async () => {
    const user = await fresh('label')
    await h.db.update(users).set({ subscriptionId: 'sub_label', stripeCustomerId: `cus_${user.id.slice(0, 8)}` }).where(eq(users.id, user.id))
    const made = await threeAgents(user)
    // The fake runtimes are unknown to the local provider: its stop answers 404, which is stopped enough.
    expect(await webhook('customer.subscription.updated', subscription(user, 'sub_label', 'active', 'solo'))).toBe('applied')
    await localQueue(h).idle()
    expect((await ofUser(user.id)).filter((a) => a.status === 'suspended').map((a) => a.id).sort()).toEqual([made[1].id, made[2].id].sort())
    const [row] = await h.db.select({ plan: users.plan }).from(users).where(eq(users.id, user.id))
    expect(row.plan).toBe('solo')
  })
})

describe('who is left alone, and what it costs', () => {
  it('admins without a plan, paying users within their plan and trials with a verified mailbox are never suspended', async () => {
    const w = engine(h, { start: Date.now(), runtimes: { stop: async () => {} } })
    const admin = h.users.admin
    const payer = await fresh('collective')
    const trial = await fresh()
    await h.db.update(users).set({ trialEndsAt: new Date(w.clock.now() + DAY) }).where(eq(users.id, trial.id))
    const kept = [await seedAgent(h, admin, null), await seedAgent(h, admin, null), await seedAgent(h, payer, null), await seedAgent(h, payer, null), await seedAgent(h, trial, null)]
    await w.sweep()
    for (const a of kept) expect((await stored(a.id)).status).toBe('running')
  })

  it('one query however many users pay: nothing is read per user', async () => {
    const w = engine(h, { start: Date.now(), runtimes: { stop: async () => {} } })
    await reconcileAccess(w.deps) // whatever earlier tests left to suspend
    const measure = async () => {
      const before = h.traffic()
      expect(await reconcileAccess(w.deps)).toEqual({ suspended: 0, failed: 0 })
      return h.traffic().dbStatements - before.dbStatements
    }
    const few = await measure()
    for (let i = 0; i < 15; i++) await seedAgent(h, await fresh('solo'), null)
    expect(await measure()).toBe(few)
  })

  it('the batch never repairs the runtime of an owner whose paid access ended before the sweep reconciled it', async () => {
    const repairs: string[] = []
    const w = engine(h, { start: Date.now(), runtimes: { repair: async (t: RuntimeTarget) => void repairs.push(t.agentId), stop: async () => {} } })
    const seed = async (status: string) => {
      const runtime = await startFakeRuntime(BROKEN)
      fakes.push(runtime)
      const user = await fresh('solo')
      await setPlan(h.db, user.id, 'solo', `sub_${n}`, { status })
      return seedAgent(h, user, runtime.url)
    }
    const paying = await seed('active')
    const lapsed = await seed('canceled')
    // The same failing probes for both: three in a row ask for a repair.
    for (let probe = 0; probe < 3; probe++) {
      await w.check([paying.id, lapsed.id])
      w.clock.advance(5000)
    }
    expect(repairs).toEqual([paying.id])
    expect((await watchRow(h, lapsed.id)).repairAttempts).toBe(0)
  })
})
