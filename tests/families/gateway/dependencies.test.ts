import { beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { readUsage } from '../../../lib/billing/usage'
import { startFaultProxy, underFault } from '../../support/fault-proxy'
import { useFixture, useHarness } from '../../support/harness'
import { useLogLines } from '../../support/log-lines'
import { gateway, setPlan, startPluginServer } from './helpers'

/** A plugin's upstream must answer (headers) within this long (`GATEWAY_UPSTREAM_TIMEOUT_MS`). */
const GATEWAY_UPSTREAM_TIMEOUT_MS = 400
/** The bound on an answer while the upstream is down: the deadline, and room for a loaded machine. */
const ANSWER_WITHIN_MS = GATEWAY_UPSTREAM_TIMEOUT_MS + 1500
const WHY = {
  refuse: 'The plugin is unavailable: its upstream could not be reached',
  blackhole: 'The plugin is unavailable: no answer within 0.4 s',
} as const

/**
 * A plugin's upstream behind the fault proxy, refused (connections refused) and blackholed (accepted, never
 * answered), README "When a dependency fails": the gateway's own envelope, 502 `no_plugin` (`NO_PLUGIN`) saying why,
 * within `GATEWAY_UPSTREAM_TIMEOUT_MS`; the units taken for the call come back; one `gateway.upstream_unavailable`
 * line names the plugin, never the upstream's URL; the same call is served once the upstream is back.
 */
describe('gateway while a plugin upstream is down', () => {
  const plugins = useFixture(() => startPluginServer())
  const proxy = useFixture(() => startFaultProxy({ target: plugins.url, mode: 'http' }))
  const h = useHarness(() => ({
    env: {
      GATEWAY_PLUGINS: JSON.stringify({ agent: { url: `${proxy.url}/agent` } }),
      GATEWAY_UPSTREAM_TIMEOUT_MS: String(GATEWAY_UPSTREAM_TIMEOUT_MS),
    },
  }))
  const logs = useLogLines()
  beforeAll(() => setPlan(h, h.users.alice, 'solo'))
  beforeEach(() => plugins.reset())
  const used = async () => (await readUsage(h.services.kv, h.users.alice.id, 'solo')).used

  it.each(['refuse', 'blackhole'] as const)('upstream %sd → 502 no_plugin in time, the units given back; then served', async (fault) => {
    const before = await used()
    const { value: res, ms } = await underFault(proxy, fault, () => gateway(h, { user: h.users.alice }))
    expect(res.status).toBe(502)
    expect(await res.json()).toEqual({ error: 'no_plugin', code: 'NO_PLUGIN', message: WHY[fault] })
    expect(res.headers.get('x-plugin-id')).toBe('agent')
    expect(ms).toBeLessThan(ANSWER_WITHIN_MS)
    expect(await used()).toBe(before)
    logs.expectOne('gateway.upstream_unavailable', { level: 'warn', dependency: 'plugin_upstream', pluginId: 'agent', reason: WHY[fault] })

    const again = await gateway(h, { user: h.users.alice })
    expect(again.status).toBe(200)
    expect(await again.json()).toMatchObject({ plugin: 'agent' })
    expect(await used()).toBeGreaterThan(before)
  })
})
