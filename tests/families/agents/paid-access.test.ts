import { and, eq } from 'drizzle-orm'
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import type { AgentJson } from '../../../lib/agents/lifecycle'
import { accessPlan, agentLimitSql, paidAccessSql, type PlanRecord } from '../../../lib/billing/plans'
import { MANAGED_RUNTIME_AGENT } from '../../../functions/skills/install'
import { agentEvents, agents, files, users } from '../../../schema'
import { setPlan } from '../../auth/helpers'
import type { SeededUser } from '../../support/harness'
import { backendCall, call } from '../../support/requests'
import { download, filesHarness, list, remove, upload } from '../files/helpers'
import { seedAgent } from '../instance/helpers'
import { AGENTS_ENV, provision, SHARED, storedAgent, waitRunning } from './helpers'
import { useFixture } from '../../support/harness'

/**
 * Paid access is checked at every use, from the user's stored row at that moment (0-decisions "Access over time"):
 * the trial ending, the trial's mailbox rule, the skills backing agent. The clock is moved with fake timers (Date
 * only), never slept through.
 */
const DAY = 24 * 60 * 60 * 1000
const PLAN_REQUIRED = { error: 'Paid plan required', code: 'PLAN_REQUIRED' }
const SKILL = 'platform-web-search'

let n = 0
const h = useFixture(() => filesHarness('local', AGENTS_ENV), { close: (x) => x.closeAll() })
afterEach(() => vi.useRealTimers())

/** A new account as sign-up makes it: a verified email, no plan, the 7-day trial from `start`. */
async function trialUser(start = Date.now(), email = `trial-${++n}-${crypto.randomUUID().slice(0, 8)}@example.com`) {
  const user = await h.seedUser('Trial', email, { plan: null })
  await h.db.update(users).set({ trialStartedAt: new Date(start), trialEndsAt: new Date(start + 7 * DAY) }).where(eq(users.id, user.id))
  return user
}

const expect402 = async (res: Response | Promise<Response>, what: string) => {
  const r = await res
  const body = await r.json()
  expect(r.status, `${what}: ${JSON.stringify(body)}`).toBe(402)
  expect(body, what).toEqual(PLAN_REQUIRED)
}

describe('the rule: accessPlan, and the same rule as SQL', () => {
  const config = { ADMIN_EMAILS: ['boss@example.com'], serviceDomain: 'localhost' }
  const now = Date.parse('2026-03-02T10:00:00Z')
  const verified = new Date(now - DAY)
  const live = new Date(now + DAY)
  const over = new Date(now - 1)
  const row = (fields: Partial<PlanRecord>): PlanRecord => ({ plan: null, subscriptionStatus: 'inactive', trialEndsAt: null, email: 'a@example.com', emailVerifiedAt: verified, ...fields })
  const cases: Array<[string, PlanRecord, string | null]> = [
    ['a live trial, verified email', row({ trialEndsAt: live }), 'solo'],
    ['a live trial, unverified email', row({ trialEndsAt: live, emailVerifiedAt: null }), null],
    ['a live trial, wallet address (verified by its sign-in)', row({ trialEndsAt: live, email: '0xabc@wallet.localhost' }), null],
    ['a live trial, Farcaster address (verified by its sign-in)', row({ trialEndsAt: live, email: '123@farcaster.localhost' }), null],
    ['the trial over', row({ trialEndsAt: over }), null],
    ['no trial, no plan', row({}), null],
    ['collective, active', row({ plan: 'collective', subscriptionStatus: 'active' }), 'collective'],
    ['label, past due (Stripe retrying)', row({ plan: 'label', subscriptionStatus: 'past_due' }), 'label'],
    ['a legacy name, active', row({ plan: 'pro', subscriptionStatus: 'active' }), 'collective'],
    ['collective, canceled, trial over', row({ plan: 'collective', subscriptionStatus: 'canceled', trialEndsAt: over }), null],
    ['collective, canceled, trial live: the trial’s solo', row({ plan: 'collective', subscriptionStatus: 'canceled', trialEndsAt: live }), 'solo'],
    ['the deprecated free plan, active', row({ plan: 'free', subscriptionStatus: 'active' }), null],
    ['a wallet address on a paid plan', row({ plan: 'solo', subscriptionStatus: 'active', email: '0xabc@wallet.localhost' }), 'solo'],
    ['a verified admin, no plan', row({ email: 'boss@example.com' }), 'network'],
    ['an unverified admin address', row({ email: 'boss@example.com', emailVerifiedAt: null }), null],
  ]

  it.each(cases)('%s', (_, record, plan) => {
    expect(accessPlan(record, config, now)).toBe(plan)
  })

  it('paidAccessSql and agentLimitSql agree with accessPlan on every case', async () => {
    for (const [what, record, plan] of cases) {
      // One row at a time (two cases share the admin's address, which is unique).
      const email = record.email.startsWith('boss@') ? record.email : `${crypto.randomUUID().slice(0, 8)}-${record.email}`
      const [u] = await h.db.insert(users).values({ ...record, email, name: 'x' }).returning({ id: users.id })
      const [got] = await h.db
        .select({ paid: paidAccessSql(config, new Date(now)), limit: agentLimitSql(config) })
        .from(users)
        .where(eq(users.id, u.id))
      await h.db.delete(users).where(eq(users.id, u.id))
      expect(got.paid, what).toBe(plan !== null)
      if (plan) expect(got.limit, what).toBe({ solo: 1, collective: 3, label: 10, network: -1 }[plan])
    }
  })
})

describe('the trial ends: every use answers 402, reading and removing stay open, paying again lets it run', () => {
  const start = Date.now()
  let user: SeededUser
  let agent: AgentJson
  let fileId: string

  beforeAll(async () => {
    user = await trialUser(start)
  })

  it('during the trial (a verified real mailbox) the account provisions and uses its agent on solo', async () => {
    agent = await provision(h, user, { name: 'trial-agent' })
    expect(agent.plan).toBe('solo')
    await waitRunning(h, user, agent.id)
    const up = await upload(h, user, agent.id, { filename: 'notes.txt', data: 'kept' })
    expect(up.status).toBe(201)
    fileId = (await up.json()).file.id
    expect((await call(h, 'POST', '/api/social/posts', { user, body: { agentId: agent.id, content: 'hello from the trial' } })).status).toBe(201)
  })

  it('past trialEndsAt, each use in the list is 402 PLAN_REQUIRED (the backend’s shared key too) and changes nothing', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(start + 7 * DAY + 60_000)
    const before = await storedAgent(h, agent.id)
    const events = (await h.db.select().from(agentEvents).where(eq(agentEvents.agentId, agent.id))).length
    const id = agent.id
    const uses: Array<[string, string, unknown]> = [
      ['POST', `/api/agents/${id}/start`, undefined],
      ['POST', `/api/agents/${id}/restart`, undefined],
      ['POST', `/api/agents/${id}/repair`, undefined],
      ['POST', `/api/agents/${id}/reset-memory`, undefined],
      ['POST', `/api/agents/${id}/update`, {}],
      ['POST', `/api/agents/${id}/sync`, undefined],
      ['POST', `/api/instance/${user.id}/start`, undefined],
      ['POST', `/api/instance/${user.id}/restart`, undefined],
      ['POST', `/api/instance/${user.id}/factory-reset`, undefined],
      ['POST', '/api/runtime/maintenance', { action: 'repair', agentId: id }],
      ['POST', '/api/runtime/maintenance', { action: 'update' }],
      ['POST', '/api/debug', { command: 'runtime.version', agentId: id }],
      ['PUT', '/api/heartbeat', { agentId: id, enabled: true, frequency: '1h' }],
      ['POST', '/api/gateway/chat', { message: 'still there?' }],
      ['POST', '/api/skills/install', { skillId: SKILL, agentId: id }],
      ['POST', '/api/social/posts', { agentId: id, content: 'after the trial' }],
    ]
    for (const [method, path, body] of uses) await expect402(call(h, method, path, { user, body }), `${method} ${path}`)
    await expect402(upload(h, user, id, { filename: 'more.txt', data: 'more' }), 'POST /api/files')
    for (const action of ['start', 'restart', 'repair']) {
      await expect402(backendCall(h.backend, 'POST', `/api/agents/${id}/${action}`, { headers: SHARED }), `backend ${action}`)
    }
    // Creating an agent answers provisioning's own 403.
    const create = await call(h, 'POST', '/api/provision', { user, body: {} })
    expect(create.status).toBe(403)
    expect(await create.json()).toEqual({ error: 'Active subscription required', code: 'SUBSCRIPTION_REQUIRED' })

    const after = await storedAgent(h, agent.id)
    expect(after.status).toBe(before.status)
    expect(after.heartbeatEnabled).toBe(false)
    expect((await h.db.select().from(agentEvents).where(eq(agentEvents.agentId, agent.id))).length).toBe(events)
    expect((await h.db.select().from(files).where(eq(files.userId, user.id))).map((f) => f.filename)).toEqual(['notes.txt'])
    expect((await h.db.select().from(agents).where(eq(agents.userId, user.id))).map((a) => a.id)).toEqual([agent.id])
  })

  it('reading and removing stay open: list, details, stats, logs, files and their download, the trial’s dates, stop', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(start + 7 * DAY + 120_000)
    for (const path of ['/api/agents', `/api/agents/${agent.id}`, `/api/agents/${agent.id}/stats`, `/api/agents/${agent.id}/config`, `/api/logs/${agent.id}/history`, `/api/instance/${user.id}`]) {
      const res = await call(h, 'GET', path, { user })
      expect(res.status, path).toBe(200)
      await res.body?.cancel()
    }
    expect((await (await list(h, user)).json()).files.map((f: { id: string }) => f.id)).toEqual([fileId])
    const file = await download(h, user, fileId)
    expect(file.status).toBe(200)
    expect(await file.text()).toBe('kept')
    const trial = await (await call(h, 'GET', '/api/trial', { user })).json()
    expect(trial).toEqual({ active: false, startedAt: new Date(start).toISOString(), endsAt: new Date(start + 7 * DAY).toISOString(), daysRemaining: 0 })
    // Turning the heartbeat off uses nothing.
    expect((await call(h, 'PUT', '/api/heartbeat', { user, body: { agentId: agent.id, enabled: false } })).status).toBe(200)
    const stopped = await call(h, 'POST', `/api/agents/${agent.id}/stop`, { user })
    expect(stopped.status).toBe(200)
    expect((await stopped.json()).status).toBe('stopped')
  })

  it('a plan bought: start works again (the same row read at the moment of use)', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(start + 7 * DAY + 180_000)
    await setPlan(h.db, user.id, 'solo', 'sub_trial_over')
    const res = await call(h, 'POST', `/api/agents/${agent.id}/start`, { user })
    expect(res.status).toBe(200)
    expect((await res.json()).status).toBe('starting')
    vi.useRealTimers()
    await waitRunning(h, user, agent.id)
  })

  it('lapsed again (canceled): the file is deleted and so is the agent; nothing is kept that the user cannot remove', async () => {
    await setPlan(h.db, user.id, 'solo', 'sub_trial_over', { status: 'canceled', trialEndsAt: new Date(Date.now() - 1000) })
    await expect402(call(h, 'POST', `/api/agents/${agent.id}/restart`, { user }), 'restart')
    expect((await remove(h, user, { fileId })).status).toBe(200)
    const del = await call(h, 'DELETE', `/api/agents/${agent.id}`, { user })
    expect(del.status).toBe(200)
    expect(await h.db.select().from(agents).where(eq(agents.userId, user.id))).toEqual([])
  })
})

describe('the trial’s paid access needs a verified real mailbox', () => {
  it('an unverified email and a derived wallet address get no compute from their live trial; a verified one does', async () => {
    const unverified = await trialUser()
    await h.db.update(users).set({ emailVerifiedAt: null }).where(eq(users.id, unverified.id))
    const wallet = await trialUser(Date.now(), `0x${crypto.randomUUID().replace(/-/g, '')}abcdef01@wallet.localhost`)
    const farcaster = await trialUser(Date.now(), `${Math.floor(Math.random() * 1e9)}@farcaster.localhost`)
    for (const user of [unverified, wallet, farcaster]) {
      const res = await call(h, 'POST', '/api/provision', { user, body: {} })
      expect(res.status, user.email).toBe(403)
      await expect402(call(h, 'POST', '/api/skills/install', { user, body: { skillId: SKILL, agentId: user.id } }), user.email)
      // The trial's dates are still reported.
      expect((await (await call(h, 'GET', '/api/trial', { user })).json())).toMatchObject({ active: true, daysRemaining: 7 })
    }
    const real = await trialUser()
    const agent = await provision(h, real)
    expect(agent.plan).toBe('solo')
  })
})

describe('the skills backing agent (the managed runtime’s) goes through the provisioning gate', () => {
  const install = (user: SeededUser) => call(h, 'POST', '/api/skills/install', { user, body: { skillId: SKILL, agentId: user.id } })
  const agentsOf = (userId: string) => h.db.select().from(agents).where(eq(agents.userId, userId))

  it('without paid access → 402, and no agent is made', async () => {
    const nobody = await h.seedUser('Nobody', `nobody-${crypto.randomUUID().slice(0, 8)}@example.com`, { plan: null })
    await expect402(install(nobody), 'install')
    expect(await agentsOf(nobody.id)).toEqual([])
  })

  it('it counts against the plan: made once (however many installs race), then the plan is full', async () => {
    const solo = await h.seedUser('Solo', `solo-${crypto.randomUUID().slice(0, 8)}@example.com`, { plan: 'solo' })
    const results = await Promise.all(Array.from({ length: 5 }, () => install(solo)))
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200])
    const made = await agentsOf(solo.id)
    expect(made.map((a) => [a.name, a.plan, a.status])).toEqual([[MANAGED_RUNTIME_AGENT.name, 'solo', 'running']])
    const refused = await call(h, 'POST', '/api/provision', { user: solo, body: {} })
    expect(refused.status).toBe(429)
    expect(await refused.json()).toMatchObject({ code: 'AGENT_LIMIT', limit: 1, plan: 'solo' })
  })

  it('a plan already full (a template counts, as it does for provisioning) → 429 AGENT_LIMIT, nothing made', async () => {
    const full = await h.seedUser('Full', `full-${crypto.randomUUID().slice(0, 8)}@example.com`, { plan: 'solo' })
    await seedAgent(h, full, { status: 'template', name: 'blueprint' })
    const res = await install(full)
    expect(res.status).toBe(429)
    expect(await res.json()).toMatchObject({ code: 'AGENT_LIMIT', plan: 'solo' })
    expect((await agentsOf(full.id)).map((a) => a.name)).toEqual(['blueprint'])
    expect(await h.db.select().from(agents).where(and(eq(agents.userId, full.id), eq(agents.name, MANAGED_RUNTIME_AGENT.name)))).toEqual([])
  })
})
