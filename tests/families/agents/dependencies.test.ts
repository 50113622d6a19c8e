import { beforeEach, describe, expect, it } from 'vitest'
import type { AgentJson } from '../../../lib/agents/lifecycle'
import { RailwayProvider } from '../../../lib/runtime/railway'
import { setPlan } from '../../auth/helpers'
import { startFaultProxy, underFault } from '../../support/fault-proxy'
import { type SeededUser, useFixture, useHarness } from '../../support/harness'
import { useLogLines } from '../../support/log-lines'
import { startRailwayServer } from '../../support/railway-server'
import { call } from '../../support/requests'
import type { Config } from '../../../lib/config'
import { startFakeRuntime } from '../../support/fake-runtime'
import { seedAgent } from '../instance/helpers'
import { AGENTS_ENV, storedAgent, withServices } from './helpers'

/** Each Railway GraphQL call gives up after this long (`RAILWAY_TIMEOUT_MS`) while Railway is down. */
const RAILWAY_TIMEOUT_MS = 400
/** The bound on an answer while Railway is down: one call's deadline (the first call fails the request), and room for a loaded machine. */
const ANSWER_WITHIN_MS = RAILWAY_TIMEOUT_MS + 1500
const FAULTS = ['refuse', 'blackhole'] as const
const RAILWAY = { token: 'railway-deps-token-7c1d', projectId: 'prj-deps', environmentId: 'env-deps' }
const UNAVAILABLE = { error: 'Runtime provider unavailable', code: 'RUNTIME_UNAVAILABLE' }

/**
 * Railway behind the fault proxy, refused (connections refused) and blackholed (accepted, never answered), README
 * "When a dependency fails": provisioning and lifecycle calls answer 502 `RUNTIME_UNAVAILABLE` within
 * `RAILWAY_TIMEOUT_MS`; nothing claims success (a failed provision is an agent in status `error`, no runtime id, no
 * service left in Railway; a failed restart leaves the agent `error` with the reason); one `railway.call_failed`
 * line names the dependency and the operation, never the URL or the token; the same calls succeed once Railway is back.
 */
describe('agents on Railway while Railway is down', () => {
  const railway = useFixture(() => startRailwayServer(RAILWAY))
  const proxy = useFixture(() => startFaultProxy({ target: railway.url, mode: 'http' }))
  const h = useHarness({ env: AGENTS_ENV })
  const logs = useLogLines()
  let user: SeededUser
  // A user of their own for each test (provisioning is rate limited per user), on a plan without an agent limit.
  beforeEach(async () => {
    user = await h.seedUser('Rail', `rail-${crypto.randomUUID()}@example.com`)
    await setPlan(h.db, user.id, 'network', `sub_${crypto.randomUUID()}`)
  })

  /** The Railway provider through the proxy: the short deadline while down, the default one otherwise. */
  const provider = (timeoutMs?: number) => new RailwayProvider({ ...RAILWAY, apiUrl: `${proxy.url}${new URL(railway.url).pathname}`, timeoutMs })
  const onRailway = <T>(fn: () => T | Promise<T>, timeoutMs?: number) => withServices(h, { runtimes: provider(timeoutMs) }, async () => fn())
  const provisionCall = (name: string) => call(h, 'POST', '/api/provision', { user, body: { name } })
  const agentsNamed = async (name: string) =>
    ((await (await call(h, 'GET', '/api/agents', { user })).json()) as { agents: AgentJson[] }).agents.filter((a) => a.name === name)

  function expectOneLine() {
    const line = logs.expectOne('railway.call_failed', { level: 'warn', dependency: 'railway', operation: expect.any(String), status: 502 })
    expect(JSON.stringify(line)).not.toContain(RAILWAY.token)
  }

  it.each(FAULTS)('provision while Railway is %sd → 502 in time; the agent is `error` with no runtime, nothing left in Railway; then one provisions', async (fault) => {
    const services = railway.services.size
    const name = `down-${fault}`
    const { value: res, ms } = await underFault(proxy, fault, () => onRailway(() => provisionCall(name), RAILWAY_TIMEOUT_MS))
    expect(res.status).toBe(502)
    expect(await res.json()).toEqual(UNAVAILABLE)
    expect(ms).toBeLessThan(ANSWER_WITHIN_MS)
    const [failed] = await agentsNamed(name)
    expect(failed).toMatchObject({ status: 'error', url: null })
    expect(failed.statusReason).toMatch(/^Runtime creation failed/)
    expect((await storedAgent(h, failed.id)).runtimeServiceId).toBeNull()
    expect(railway.services.size).toBe(services)
    expectOneLine()

    const again = await onRailway(() => provisionCall(`back-${fault}`))
    expect(again.status, await again.clone().text()).toBe(201)
    expect(railway.services.size).toBe(services + 1)
  })

  it.each(FAULTS)('restart while Railway is %sd → 502 in time; the agent `error` with the reason; then the restart goes through', async (fault) => {
    const created = await onRailway(() => provisionCall(`restart-${fault}`))
    expect(created.status).toBe(201)
    const { agent } = (await created.json()) as { agent: AgentJson }
    const restart = () => onRailway(() => call(h, 'POST', `/api/agents/${agent.id}/restart`, { user }), RAILWAY_TIMEOUT_MS)

    const { value: res, ms } = await underFault(proxy, fault, restart)
    expect(res.status).toBe(502)
    expect(await res.json()).toEqual(UNAVAILABLE)
    expect(ms).toBeLessThan(ANSWER_WITHIN_MS)
    const row = await storedAgent(h, agent.id)
    expect(row.status).toBe('error')
    expect(row.statusReason).toMatch(/^restart failed/)
    expectOneLine()

    const again = await onRailway(() => call(h, 'POST', `/api/agents/${agent.id}/restart`, { user }))
    expect(again.status, await again.clone().text()).toBe(200)
    expect((await storedAgent(h, agent.id)).status).toBe('starting')
  })

  it.each(FAULTS)('delete while Railway is %sd → 502 in time; the record kept (`error`), the service too; sent again, both go', async (fault) => {
    const created = await onRailway(() => provisionCall(`delete-${fault}`))
    expect(created.status).toBe(201)
    const { agent } = (await created.json()) as { agent: AgentJson }
    const serviceId = (await storedAgent(h, agent.id)).runtimeServiceId!
    const remove = (timeoutMs?: number) => onRailway(() => call(h, 'DELETE', `/api/agents/${agent.id}`, { user }), timeoutMs)

    const { value: res, ms } = await underFault(proxy, fault, () => remove(RAILWAY_TIMEOUT_MS))
    expect(res.status).toBe(502)
    expect(await res.json()).toEqual(UNAVAILABLE)
    expect(ms).toBeLessThan(ANSWER_WITHIN_MS)
    expect((await storedAgent(h, agent.id)).status).toBe('error')
    expect(railway.services.has(serviceId)).toBe(true)
    expectOneLine()

    expect((await remove()).status).toBe(200)
    expect(await storedAgent(h, agent.id)).toBeUndefined()
    expect(railway.services.has(serviceId)).toBe(false)
  })
})

/**
 * An agent's runtime gateway behind the fault proxy (the fake runtime in front of which the agent's URL points):
 * a sync answers 502 `RUNTIME_UNAVAILABLE` within `RUNTIME_GATEWAY_TIMEOUT_MS`, nothing pushed, one
 * `agent.sync_failed` line naming the runtime; once it is back the sync goes through.
 */
describe("an agent's runtime gateway while it is down", () => {
  const runtime = useFixture(() => startFakeRuntime({ '/api/gateway/sync': { body: { ok: true } } }))
  const proxy = useFixture(() => startFaultProxy({ target: runtime.url, mode: 'http' }))
  const h = useHarness({ env: AGENTS_ENV })
  const logs = useLogLines()
  const GATEWAY_TIMEOUT_MS = 400

  it.each(FAULTS)('sync while the runtime is %sd → 502 in time, nothing pushed; then it syncs', async (fault) => {
    const user = await h.seedUser('Gw', `gw-${crypto.randomUUID()}@example.com`)
    await setPlan(h.db, user.id, 'solo', `sub_${crypto.randomUUID()}`)
    const agent = await seedAgent(h, user, { runtimeUrl: proxy.url })
    const sync = () => call(h, 'POST', `/api/agents/${agent.id}/sync`, { user })
    const config = h.services.config as Config
    const saved = config.RUNTIME_GATEWAY_TIMEOUT_MS
    const pushed = runtime.hits.get('/api/gateway/sync') ?? 0

    config.RUNTIME_GATEWAY_TIMEOUT_MS = GATEWAY_TIMEOUT_MS
    const { value: res, ms } = await underFault(proxy, fault, sync).finally(() => (config.RUNTIME_GATEWAY_TIMEOUT_MS = saved))
    expect(res.status).toBe(502)
    expect(await res.json()).toEqual(UNAVAILABLE)
    expect(ms).toBeLessThan(GATEWAY_TIMEOUT_MS + 1500)
    expect(runtime.hits.get('/api/gateway/sync') ?? 0).toBe(pushed)
    logs.expectOne('agent.sync_failed', { level: 'warn', dependency: 'runtime', agentId: agent.id, status: 502 })

    const again = await sync()
    expect(again.status, await again.clone().text()).toBe(200)
    expect(runtime.hits.get('/api/gateway/sync')).toBe(pushed + 1)
  })
})
