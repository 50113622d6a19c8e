import { eq } from 'drizzle-orm'
import { beforeAll, describe, expect, it } from 'vitest'
import { agents, users } from '../../../schema'
import type { AgentJson } from '../../../lib/agents/lifecycle'
import { RailwayProvider } from '../../../lib/runtime/railway'
import { setPlan } from '../../auth/helpers'
import { useHarness } from '../../support/harness'
import { backendCall, call, withinOneWindow } from '../../support/requests'
import { AGENTS_ENV, provision, provisioningConfig, storedAgent, withServices } from './helpers'

const h = useHarness({ env: AGENTS_ENV })
beforeAll(async () => {
  await setPlan(h.db, h.users.alice.id, 'solo', 'sub_alice')
})

/** A new signed-in user on `plan` (its own provision rate-limit counter: 5 a minute per user). */
async function paidUser(plan: string | null = 'solo') {
  const tag = crypto.randomUUID().slice(0, 8)
  const user = await h.seedUser(`U ${tag}`, `u-${tag}@example.com`)
  await setPlan(h.db, user.id, plan, plan ? `sub_${tag}` : null)
  return user
}

/** A Railway provider whose API refuses connections: every provider call fails (502). */
const deadProvider = () => new RailwayProvider({ token: 't', projectId: 'p', environmentId: 'e', tokenKind: 'account', apiUrl: 'http://127.0.0.1:9/graphql/v2' })

const expectError = async (res: Response, status: number, body: Record<string, unknown>) => {
  const json = await res.json()
  expect(res.status, JSON.stringify(json)).toBe(status)
  expect(json).toMatchObject(body)
}

describe('provision: switches and plans', () => {
  it('kill switch → 503 and nothing is created', async () => {
    await withServices(h, provisioningConfig(h, { PROVISIONING_KILL_SWITCH: true }), async () => {
      const res = await call(h, 'POST', '/api/provision', { user: h.users.alice, body: {} })
      expect(res.headers.get('retry-after')).toBe('300')
      await expectError(res, 503, { error: 'Provisioning is temporarily paused', code: 'PROVISIONING_PAUSED' })
      await expectError(await backendCall(h.backend, 'POST', '/api/deployments', { headers: { authorization: `Bearer ${AGENTS_ENV.INTERNAL_API_KEY}` }, body: { userId: h.users.alice.id } }), 503, { code: 'PROVISIONING_PAUSED' })
    })
    expect(await h.db.select().from(agents).where(eq(agents.userId, h.users.alice.id))).toEqual([])
  })

  it('provisioning disabled → 500 `Provisioning is disabled`', async () => {
    await withServices(h, provisioningConfig(h, { PROVISIONING_ENABLED: false }), async () => {
      await expectError(await call(h, 'POST', '/api/provision', { user: h.users.alice, body: {} }), 500, { error: 'Provisioning is disabled', code: 'PROVISIONING_DISABLED' })
    })
  })

  it('no paid plan → 403 `Active subscription required`; canceled or expired trial too', async () => {
    expect(await h.db.select().from(agents).where(eq(agents.userId, h.users.bob.id))).toEqual([])
    await setPlan(h.db, h.users.bob.id, null)
    await expectError(await call(h, 'POST', '/api/provision', { user: h.users.bob, body: {} }), 403, { error: 'Active subscription required', code: 'SUBSCRIPTION_REQUIRED' })
    await setPlan(h.db, h.users.bob.id, 'solo', 'sub_b', { status: 'canceled', trialEndsAt: new Date(Date.now() - 1000) })
    await expectError(await call(h, 'POST', '/api/provision', { user: h.users.bob, body: {} }), 403, { error: 'Active subscription required' })
    // The body cannot make anyone an admin (spec "Authentication" 5: the body email is not used).
    await expectError(await call(h, 'POST', '/api/provision', { user: h.users.bob, body: { email: 'admin@example.com' } }), 403, { code: 'SUBSCRIPTION_REQUIRED' })
  })

  it('invalid bodies → 400 VALIDATION', async () => {
    await withinOneWindow(60)
    const user = await paidUser()
    for (const body of [{ name: '' }, { name: 'x'.repeat(101) }, { config: [1, 2] }, { config: { big: 'x'.repeat(17_000) } }, { aiProvider: 5 }]) {
      await expectError(await call(h, 'POST', '/api/provision', { user, body }), 400, { code: 'VALIDATION' })
    }
    // The per-user limit (5 a minute) counts every request: the sixth is refused before its body is read.
    const limited = await call(h, 'POST', '/api/provision', { user, body: '{nope' })
    expect(limited.headers.get('ratelimit-limit')).toBe('5')
    await expectError(limited, 429, { error: 'Too many requests', code: 'RATE_LIMITED' })
    await expectError(await call(h, 'POST', '/api/provision', { user: await paidUser(), body: '{nope' }), 400, { error: 'Invalid JSON body' })
  })
})

describe('plan limits', () => {
  let aliceAgent: AgentJson
  let alice: Awaited<ReturnType<typeof paidUser>>
  beforeAll(async () => {
    alice = await paidUser()
  })

  it('solo allows 1: the second provision is 429 AGENT_LIMIT', async () => {
    aliceAgent = await provision(h, alice, { name: 'only' })
    await expectError(await call(h, 'POST', '/api/provision', { user: alice, body: { name: 'second' } }), 429, { code: 'AGENT_LIMIT', limit: 1, plan: 'solo' })
  })

  it('two concurrent provisions at the limit: exactly one wins', async () => {
    const dave = await paidUser()
    const results = await Promise.all([call(h, 'POST', '/api/provision', { user: dave, body: { name: 'a' } }), call(h, 'POST', '/api/provision', { user: dave, body: { name: 'b' } })])
    expect(results.map((r) => r.status).sort()).toEqual([201, 429])
    const won = (await results.find((r) => r.status === 201)!.json()) as { agent: AgentJson }
    const list = (await (await call(h, 'GET', '/api/agents', { user: dave })).json()) as { agents: AgentJson[] }
    expect(list.agents.map((a) => a.id)).toEqual([won.agent.id])
    expect((await call(h, 'DELETE', `/api/agents/${won.agent.id}`, { user: dave })).status).toBe(200)
  })

  it('PUT plan above the user’s own → 403 PLAN_EXCEEDED; unknown fields and bad values → 400', async () => {
    await expectError(await call(h, 'PUT', `/api/agents/${aliceAgent.id}`, { user: alice, body: { plan: 'collective' } }), 403, { code: 'PLAN_EXCEEDED' })
    await expectError(await call(h, 'PUT', `/api/agents/${aliceAgent.id}`, { user: alice, body: { plan: 'gold' } }), 400, { code: 'VALIDATION' })
    await expectError(await call(h, 'PUT', `/api/agents/${aliceAgent.id}`, { user: alice, body: { token: 'x' } }), 400, { code: 'VALIDATION' })
    await expectError(await call(h, 'PUT', `/api/agents/${aliceAgent.id}/config`, { user: alice, body: { config: 'x' } }), 400, { code: 'VALIDATION' })
    await expectError(await call(h, 'POST', `/api/agents/${aliceAgent.id}/update`, { user: alice, body: { image: 'not an image!' } }), 400, { code: 'VALIDATION' })
    // An image of the owner's own would run their code in the platform's project: only versions of the runtime's repository.
    for (const image of ['docker.io/attacker/miner:latest', 'ghcr.io/agent-platform/runtime-evil:1.0', 'ghcr.io/agent-platform:1.0']) {
      await expectError(await call(h, 'POST', `/api/agents/${aliceAgent.id}/update`, { user: alice, body: { image } }), 400, {
        error: 'Image must be a version of ghcr.io/agent-platform/runtime',
        code: 'VALIDATION',
      })
    }
    expect((await storedAgent(h, aliceAgent.id)).plan).toBe('solo')
  })

  it('verify needs a verified email and paid access: a lapsed plan or an unverified email is 403 and changes nothing', async () => {
    const verify = () => call(h, 'POST', `/api/agents/${aliceAgent.id}/verify`, { user: alice })
    const forbidden = { error: 'Verification needs a verified email and paid access', code: 'FORBIDDEN' }
    await setPlan(h.db, alice.id, 'solo', 'sub_lapsed', { status: 'canceled' })
    await expectError(await verify(), 403, forbidden)
    await setPlan(h.db, alice.id, 'solo', 'sub_back')
    await h.db.update(users).set({ emailVerifiedAt: null }).where(eq(users.id, alice.id))
    await expectError(await verify(), 403, forbidden)
    expect((await storedAgent(h, aliceAgent.id)).verification).toBe('unverified')
    await h.db.update(users).set({ emailVerifiedAt: new Date() }).where(eq(users.id, alice.id))
    expect((await verify()).status).toBe(200)
  })

  it('unknown agent ids → 404 `Agent not found`', async () => {
    for (const [method, path] of [['GET', '/api/agents/nope'], ['POST', '/api/agents/nope/start'], ['DELETE', '/api/agents/nope'], ['GET', '/api/agents/nope/token']] as const) {
      await expectError(await call(h, method, path, { user: alice }), 404, { error: 'Agent not found', code: 'NOT_FOUND' })
    }
    await expectError(await backendCall(h.backend, 'POST', '/api/agents/nope/restart', { headers: { authorization: `Bearer ${AGENTS_ENV.INTERNAL_API_KEY}` } }), 404, { error: 'Agent not found' })
  })

  describe('provider failures', () => {
    // A lifecycle call or a delete while Railway is refused or never answers: dependencies.test.ts (behind the fault proxy).
    it('provisioning with a failing provider → 502 and an `error` record; its lifecycle is 404 (no runtime); delete still removes it', async () => {
      // Room under alice's plan (one agent): her first agent goes, the failed provision is then her only record.
      expect((await call(h, 'DELETE', `/api/agents/${aliceAgent.id}`, { user: alice })).status).toBe(200)
      const res = await withServices(h, { runtimes: deadProvider() }, async () => call(h, 'POST', '/api/provision', { user: alice, body: { name: 'doomed' } }))
      await expectError(res, 502, { error: 'Runtime provider unavailable', code: 'RUNTIME_UNAVAILABLE' })
      const list = (await (await call(h, 'GET', '/api/agents', { user: alice })).json()) as { agents: AgentJson[] }
      expect(list.agents).toHaveLength(1)
      expect(list.agents[0]).toMatchObject({ name: 'doomed', status: 'error', url: null })
      expect(list.agents[0].statusReason).toMatch(/^Runtime creation failed/)
      const id = list.agents[0].id
      await expectError(await call(h, 'POST', `/api/agents/${id}/start`, { user: alice }), 404, { error: 'Runtime not found', code: 'NOT_FOUND' })
      await expectError(await call(h, 'POST', `/api/agents/${id}/sync`, { user: alice }), 404, { code: 'NOT_FOUND' })
      const messages = await (await call(h, 'GET', `/api/agents/${id}/messages`, { user: alice })).json()
      expect(messages).toMatchObject({ source: 'unavailable', sessions: [], error: 'The agent has no runtime gateway' })
      expect(await (await call(h, 'GET', `/api/agents/${id}/stats`, { user: alice })).json()).toMatchObject({ status: 'unreachable', agentStatus: 'error' })
      expect((await call(h, 'DELETE', `/api/agents/${id}`, { user: alice })).status).toBe(200)
    })
  })
})

describe('backend deployments', () => {
  it('the shared key without userId → 400 `userId required`; an unknown user → 404', async () => {
    const headers = { authorization: `Bearer ${AGENTS_ENV.INTERNAL_API_KEY}` }
    await expectError(await backendCall(h.backend, 'POST', '/api/deployments', { headers, body: {} }), 400, { error: 'userId required' })
    await expectError(await backendCall(h.backend, 'POST', '/api/deployments', { headers, body: { userId: 'ghost' } }), 404, { error: 'User not found' })
  })

  it('5 per minute per IP: the sixth → 429 `Deployment rate limit exceeded.`', async () => {
    const ip = { 'cf-connecting-ip': '203.0.113.77' }
    await withinOneWindow(60)
    for (let i = 0; i < 5; i++) expect((await backendCall(h.backend, 'POST', '/api/deployments', { headers: ip, body: {} })).status).not.toBe(429)
    const res = await backendCall(h.backend, 'POST', '/api/deployments', { headers: ip, body: {} })
    expect(res.headers.get('retry-after')).toBeTruthy()
    await expectError(res, 429, { error: 'Deployment rate limit exceeded.', code: 'RATE_LIMITED' })
  })
})
