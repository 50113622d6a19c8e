import { eq } from 'drizzle-orm'
import { beforeAll, describe, expect, it } from 'vitest'
import type { AgentJson } from '../../../lib/agents/lifecycle'
import { agentEvents } from '../../../schema'
import { setPlan } from '../../auth/helpers'
import { useHarness } from '../../support/harness'
import { backendCall, call } from '../../support/requests'
import { waitFor } from '../../support/wait'
import { AGENTS_ENV, answers, provision, SHARED, stats, storedAgent, waitRunning } from './helpers'

const h = useHarness({ env: AGENTS_ENV })
beforeAll(async () => {
  await setPlan(h.db, h.users.alice.id, 'solo', 'sub_alice')
})

describe('agents: provision → running → lifecycle → delete (a real local runtime)', () => {
  let agent: AgentJson
  let token: string

  it('POST /api/provision → 201 with the agent (starting, its URL, never the token)', async () => {
    const res = await call(h, 'POST', '/api/provision', { user: h.users.alice, body: { name: 'helper', aiProvider: 'anthropic', config: { memories: { tone: 'dry' } } } })
    expect(res.status).toBe(201)
    const body = (await res.json()) as { success: true; agent: AgentJson; url: string }
    agent = body.agent
    expect(body.success).toBe(true)
    expect(agent).toMatchObject({ name: 'helper', plan: 'solo', aiProvider: 'anthropic', status: 'starting', verification: 'unverified', config: { memories: { tone: 'dry' } } })
    expect(agent.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+/)
    expect(body.url).toBe(agent.url)
    expect(agent.runtimeServiceId).toBeTruthy()
    expect(agent.provisionedAt).not.toBeNull()
    expect(Object.keys(agent)).not.toContain('gatewayToken')
    const row = await storedAgent(h, agent.id)
    expect(row.gatewayToken).toBeTruthy()
    expect(JSON.stringify(body)).not.toContain(row.gatewayToken!)
  })

  it('the runtime starts: its health wait records it running within seconds, with no read of the agent needed', async () => {
    // Only the stored row is polled: nothing here probes the runtime but the queued health wait.
    await waitFor(async () => (await storedAgent(h, agent.id)).status === 'running', { ms: 15_000, what: 'the agent stored running' })
    const events = await h.db.select().from(agentEvents).where(eq(agentEvents.agentId, agent.id))
    expect(events.find((e) => e.toState === 'running')).toMatchObject({ fromState: 'starting', reason: 'The runtime answers its probes' })
    const list = (await (await call(h, 'GET', '/api/agents', { user: h.users.alice })).json()) as { agents: AgentJson[] }
    expect(list.agents[0].status).toBe('running')
  })

  it('stats probe it running too', async () => {
    const s = await waitRunning(h, h.users.alice, agent.id)
    expect(s.health).toBe('healthy')
    expect(s.agentStatus).toBe('running')
    expect(s.probeChecks).toHaveLength(3)
    expect(s.runtimeVersion).toBeTruthy()
    expect((await storedAgent(h, agent.id)).status).toBe('running')
  })

  it('list and get show it', async () => {
    const list = (await (await call(h, 'GET', '/api/agents', { user: h.users.alice })).json()) as { agents: AgentJson[] }
    expect(list.agents.map((a) => a.id)).toEqual([agent.id])
    expect(list.agents[0].status).toBe('running')
    const get = await call(h, 'GET', `/api/agents/${agent.id}`, { user: h.users.alice })
    expect(get.status).toBe(200)
    expect(await get.json()).toMatchObject({ id: agent.id, name: 'helper', status: 'running', url: agent.url })
  })

  it('token: the owner gets the opened gateway token (no-store); it works against the runtime', async () => {
    const res = await call(h, 'GET', `/api/agents/${agent.id}/token`, { user: h.users.alice })
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    const body = (await res.json()) as { agentId: string; token: string }
    expect(body.token).toMatch(/^[0-9a-f]{64}$/)
    token = body.token
    const direct = await fetch(new URL('/api/gateway/sessions', agent.url!), { headers: { authorization: `Bearer ${token}` } })
    expect(direct.status).toBe(200)
    await direct.body?.cancel()
  })

  it('messages read the gateway; sync pushes the memories; reset-memory goes through', async () => {
    const messages = (await (await call(h, 'GET', `/api/agents/${agent.id}/messages`, { user: h.users.alice })).json()) as Record<string, unknown>
    expect(messages).toMatchObject({ agentId: agent.id, source: 'gateway' })
    expect(Array.isArray(messages.sessions)).toBe(true)
    const sync = await call(h, 'POST', `/api/agents/${agent.id}/sync`, { user: h.users.alice })
    expect(sync.status).toBe(200)
    expect(await sync.json()).toEqual({ success: true, agentId: agent.id, synced: { skills: 0, memories: 1, files: 0 } })
    const reset = await call(h, 'POST', `/api/agents/${agent.id}/reset-memory`, { user: h.users.alice })
    expect(reset.status).toBe(200)
    expect(((await reset.json()) as AgentJson).status).toBe('running')
  })

  it('config: put then get; PUT metadata; verification set and cleared', async () => {
    const put = await call(h, 'PUT', `/api/agents/${agent.id}/config`, { user: h.users.alice, body: { config: { memories: [{ key: 'a', value: 'b' }], temperature: 0.2 } } })
    expect(put.status).toBe(200)
    const got = await call(h, 'GET', `/api/agents/${agent.id}/config`, { user: h.users.alice })
    expect(await got.json()).toEqual({ agentId: agent.id, config: { memories: [{ key: 'a', value: 'b' }], temperature: 0.2 } })
    const meta = await call(h, 'PUT', `/api/agents/${agent.id}`, { user: h.users.alice, body: { name: 'renamed', aiProvider: 'openai', plan: 'solo' } })
    expect(meta.status).toBe(200)
    expect(await meta.json()).toMatchObject({ name: 'renamed', aiProvider: 'openai', plan: 'solo', config: { temperature: 0.2 } })

    expect(await (await call(h, 'GET', `/api/agents/${agent.id}/verification`, { user: h.users.alice })).json()).toEqual({ agentId: agent.id, verification: 'unverified', verified: false, verifiedAt: null })
    const verify = await call(h, 'POST', `/api/agents/${agent.id}/verify`, { user: h.users.alice })
    expect(verify.status).toBe(200)
    expect(await verify.json()).toMatchObject({ verification: 'human_verified', verified: true })
    expect((await storedAgent(h, agent.id)).verification).toBe('human_verified')
    const unverify = await call(h, 'DELETE', `/api/agents/${agent.id}/verify`, { user: h.users.alice })
    expect(await unverify.json()).toMatchObject({ verification: 'unverified', verified: false, verifiedAt: null })
  })

  it('stop → stopped (the process ends); start → running again; restart → running again', async () => {
    const stop = await call(h, 'POST', `/api/agents/${agent.id}/stop`, { user: h.users.alice })
    expect(stop.status).toBe(200)
    expect(((await stop.json()) as AgentJson).status).toBe('stopped')
    expect(await answers(agent.url!)).toBe(false)
    expect((await stats(h, h.users.alice, agent.id)).status).toBe('unreachable')
    const messages = (await (await call(h, 'GET', `/api/agents/${agent.id}/messages`, { user: h.users.alice })).json()) as Record<string, unknown>
    expect(messages).toMatchObject({ source: 'unavailable', sessions: [], totalMessages: 0 })
    expect(messages.error).toBeTruthy()

    const start = await call(h, 'POST', `/api/agents/${agent.id}/start`, { user: h.users.alice })
    expect(start.status).toBe(200)
    expect(((await start.json()) as AgentJson).status).toBe('starting')
    // The start's health wait alone makes it running (the stored row is polled, not the runtime).
    await waitFor(async () => (await storedAgent(h, agent.id)).status === 'running', { ms: 15_000, what: 'the started agent stored running' })

    const restart = await call(h, 'POST', `/api/agents/${agent.id}/restart`, { user: h.users.alice })
    expect(((await restart.json()) as AgentJson).status).toBe('starting')
    expect((await waitRunning(h, h.users.alice, agent.id)).agentStatus).toBe('running')
    const events = await h.db.select().from(agentEvents).where(eq(agentEvents.agentId, agent.id))
    expect(events.map((e) => e.toState)).toEqual(expect.arrayContaining(['provisioning', 'starting', 'running', 'stopped']))
  })

  it('update moves it to another image and records it; repair redeploys it', async () => {
    const update = await call(h, 'POST', `/api/agents/${agent.id}/update`, { user: h.users.alice, body: { image: 'ghcr.io/agent-platform/runtime:2.0.0' } })
    expect(update.status).toBe(200)
    expect(((await update.json()) as AgentJson).status).toBe('starting')
    expect((await storedAgent(h, agent.id)).image).toBe('ghcr.io/agent-platform/runtime:2.0.0')
    await waitRunning(h, h.users.alice, agent.id)
    const repair = await call(h, 'POST', `/api/agents/${agent.id}/repair`, { user: h.users.alice })
    expect(repair.status).toBe(200)
    await waitRunning(h, h.users.alice, agent.id)
  })

  it('the shared-key routes: GET /api/agents/user/:userId lists them; the backend stops and starts it', async () => {
    const list = await h.web.request(`/api/agents/user/${h.users.alice.id}`, { headers: SHARED })
    expect(list.status).toBe(200)
    const body = (await list.json()) as { agents: AgentJson[] }
    expect(body.agents.map((a) => a.id)).toEqual([agent.id])
    expect(JSON.stringify(body)).not.toContain((await storedAgent(h, agent.id)).gatewayToken!)

    const stop = await backendCall(h.backend, 'POST', `/api/agents/${agent.id}/stop`, { headers: SHARED })
    expect(stop.status).toBe(200)
    expect(((await stop.json()) as AgentJson).status).toBe('stopped')
    expect(await answers(agent.url!)).toBe(false)
    const start = await backendCall(h.backend, 'POST', `/api/agents/${agent.id}/start`, { headers: SHARED })
    expect(start.status).toBe(200)
    await waitRunning(h, h.users.alice, agent.id)
  })

  it('DELETE removes the runtime (its process ends) and then the record', async () => {
    const res = await call(h, 'DELETE', `/api/agents/${agent.id}`, { user: h.users.alice })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ success: true, id: agent.id })
    expect(await storedAgent(h, agent.id)).toBeUndefined()
    expect(await answers(agent.url!)).toBe(false)
    expect((await call(h, 'GET', `/api/agents/${agent.id}`, { user: h.users.alice })).status).toBe(404)
  })
})

describe('agents: who may provision', () => {
  it('an admin without a plan provisions (plan network); a user on a live trial provisions (solo)', async () => {
    const adminAgent = await provision(h, h.users.admin, { name: 'ops' })
    expect(adminAgent.plan).toBe('network')
    await setPlan(h.db, h.users.bob.id, null, null, { trialEndsAt: new Date(Date.now() + 86_400_000) })
    const trialAgent = await provision(h, h.users.bob)
    expect(trialAgent.plan).toBe('solo')
    expect(trialAgent.name).toMatch(/^agent-[0-9a-f]{6}$/)
    for (const [user, a] of [[h.users.admin, adminAgent], [h.users.bob, trialAgent]] as const) {
      expect((await call(h, 'DELETE', `/api/agents/${a.id}`, { user })).status).toBe(200)
    }
  })

  it('backend POST /api/deployments with the shared key creates the named user’s runtime', async () => {
    const carol = await h.seedUser('Carol', `carol-${crypto.randomUUID().slice(0, 6)}@example.com`)
    await setPlan(h.db, carol.id, 'collective', 'sub_carol')
    const res = await backendCall(h.backend, 'POST', '/api/deployments', { headers: SHARED, body: { userId: carol.id, name: 'cloud' } })
    expect(res.status).toBe(201)
    const body = (await res.json()) as { agent: AgentJson; url: string }
    expect(body.agent).toMatchObject({ name: 'cloud', plan: 'collective', status: 'starting' })
    expect((await storedAgent(h, body.agent.id)).userId).toBe(carol.id)
    await waitRunning(h, carol, body.agent.id)
    expect((await call(h, 'DELETE', `/api/agents/${body.agent.id}`, { user: carol })).status).toBe(200)
  })
})
