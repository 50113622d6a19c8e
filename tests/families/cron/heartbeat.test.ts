import { eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { agentGateway } from '../../../lib/agents/access'
import { provisionAgent } from '../../../lib/agents/provision'
import { probeRuntime } from '../../../lib/runtime/probe'
import { signDelivery } from '../../../lib/queue/sign'
import { agents } from '../../../schema'
import { useHarness } from '../../support/harness'
import { QUEUE_KEY } from './helpers'
import { waitFor } from '../../support/wait'

const HEARTBEAT_URL = 'http://127.0.0.1:8787/api/cron/heartbeat'

// Owners on the unlimited plan: the reconciliation of paid access leaves their agents to the health checks.
const h = useHarness({ env: { QSTASH_CURRENT_SIGNING_KEY: QUEUE_KEY, QSTASH_NEXT_SIGNING_KEY: QUEUE_KEY }, plan: 'network' })

async function deliver(body: unknown, key = QUEUE_KEY) {
  const text = JSON.stringify(body)
  return h.web.request(HEARTBEAT_URL, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'upstash-signature': await signDelivery(key, HEARTBEAT_URL, text) },
    body: text,
  })
}

const running = (url: string) =>
  waitFor(async () => (await probeRuntime(url)).status === 'running', { ms: 5000, every: 100, what: 'the runtime turning running' })

describe('POST /api/cron/heartbeat', () => {
  it("puts a setting stored while the gateway was unreachable on the gateway, once; an unreachable one waits", async () => {
    const agent = await provisionAgent(h.services, { userId: h.users.alice.id, plan: 'solo', name: 'hb-sync' })
    await running(agent.runtimeUrl!)
    // PUT /api/heartbeat stored this while the gateway could not be written.
    await h.db.update(agents).set({ status: 'running', heartbeatEnabled: true, heartbeatFrequency: '30m' }).where(eq(agents.id, agent.id))
    const [stored] = await h.db.select().from(agents).where(eq(agents.id, agent.id))
    const gateway = await agentGateway(h.services, stored)
    expect((await gateway.cronJobs()).find((j) => j.id === 'heartbeat' && j.enabled)).toBeUndefined()

    const first = await deliver({})
    expect(first.status).toBe(200)
    expect(await first.json()).toEqual({ ok: true, checked: 1, updated: 1, unreachable: 0, more: false })
    expect((await gateway.cronJobs()).find((j) => j.id === 'heartbeat')).toMatchObject({ enabled: true, frequency: '30m' })

    // Already in agreement: nothing is written again.
    expect(await (await deliver({})).json()).toEqual({ ok: true, checked: 1, updated: 0, unreachable: 0, more: false })

    // The owner turns it off while the runtime is down: counted unreachable, applied once it is back.
    await h.services.runtimes.stop({ agentId: agent.id, name: `agent-${agent.id}`, serviceId: agent.runtimeServiceId, url: agent.runtimeUrl, gatewayToken: null })
    await h.db.update(agents).set({ heartbeatEnabled: false }).where(eq(agents.id, agent.id))
    expect(await (await deliver({})).json()).toMatchObject({ checked: 1, updated: 0, unreachable: 1 })
  })

  it('an unsigned or wrongly signed delivery is 401 and touches no gateway', async () => {
    const unsigned = await h.web.request(HEARTBEAT_URL, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    expect(unsigned.status).toBe(401)
    expect((await deliver({}, 'not-the-key')).status).toBe(401)
  })

  it('agents that are stopped, templates or without a runtime are not looked at', async () => {
    // Runtimes on a closed port: were any of these looked at, it would count as unreachable.
    const dead = { runtimeUrl: 'http://127.0.0.1:9', gatewayToken: 'sealed', gatewayTokenKeyId: 'session', heartbeatEnabled: true }
    await h.db.insert(agents).values([
      { userId: h.users.bob.id, name: 'template', status: 'template', ...dead },
      { userId: h.users.bob.id, name: 'stopped', status: 'stopped', ...dead },
      { userId: h.users.bob.id, name: 'no-runtime', status: 'running', heartbeatEnabled: true },
    ])
    // Only the first test's agent is a candidate (running in the database, its runtime stopped).
    expect(await (await deliver({})).json()).toEqual({ ok: true, checked: 1, updated: 0, unreachable: 1, more: false })
  })
})
