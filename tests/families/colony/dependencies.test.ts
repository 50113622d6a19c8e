import { describe, expect, it } from 'vitest'
import { type FaultProxy, startFaultProxy, underFault } from '../../support/fault-proxy'
import { useFixture, useHarness } from '../../support/harness'
import { useLogLines } from '../../support/log-lines'
import { call } from '../../support/requests'
import { COLONY, startSoulHost } from '../../support/soul-host'

/** Each soul host gets this long (`SOUL_SERVICE_TIMEOUT_MS`); the hosts are asked at once, so one wait in all. */
const SOUL_SERVICE_TIMEOUT_MS = 400
/** The bound on an answer while hosts are down: one host's deadline, and room for a loaded machine. */
const ANSWER_WITHIN_MS = SOUL_SERVICE_TIMEOUT_MS + 1500
const FAULTS = ['refuse', 'blackhole'] as const
const FALLBACK_ROOT = { address: '0x0000000000000000000000000000000000000000', wallet_balance: { formatted: '0.00', token: 'USDC.e' } }

/**
 * The soul hosts behind fault proxies, refused (connections refused) and blackholed (accepted, never answered), README
 * "When a dependency fails": the spec's colony fallback. A primary that is down costs one deadline and the fallback
 * serves (200, `degraded`); every host down is still 200 `degraded` with the zero-address root; one `colony.degraded`
 * line names the dependency and the outcomes, never a host; once the primary is back it serves, not degraded.
 */
describe('colony while soul hosts are down', () => {
  const primaryHost = useFixture(() => startSoulHost({ '/colony': { body: { ...COLONY, agents: COLONY.agents.slice(0, 1) } } }))
  const fallbackHost = useFixture(() => startSoulHost({ '/colony': { body: COLONY } }))
  const primary = useFixture(() => startFaultProxy({ target: primaryHost.url, mode: 'http' }))
  const fallback = useFixture(() => startFaultProxy({ target: fallbackHost.url, mode: 'http' }))
  const h = useHarness(() => ({
    env: { SOUL_SERVICE_URL: primary.url, SOUL_SERVICE_FALLBACK_URLS: fallback.url, SOUL_SERVICE_TIMEOUT_MS: String(SOUL_SERVICE_TIMEOUT_MS) },
  }))
  const logs = useLogLines()
  const tree = () => call(h, 'GET', '/api/colony/status?action=tree', { user: h.users.alice })

  /** `fn` with every proxy in `proxies` under `fault`; they pass again afterwards. */
  async function whileDown<T>(proxies: FaultProxy[], fault: (typeof FAULTS)[number], fn: () => T | Promise<T>) {
    const [first, ...rest] = proxies
    return underFault(first, fault, async () => {
      await Promise.all(rest.map((p) => p.set(fault)))
      try {
        return await fn()
      } finally {
        await Promise.all(rest.map((p) => p.set('pass')))
      }
    })
  }

  function expectOneLine(served: 'fallback' | 'none') {
    logs.expectOne('colony.degraded', { level: 'warn', dependency: 'soul_host', action: 'tree', served })
  }

  it.each(FAULTS)('the primary %sd: the fallback serves at once, 200 `degraded`; then the primary again', async (fault) => {
    const { value: res, ms } = await whileDown([primary], fault, tree)
    expect(ms).toBeLessThan(ANSWER_WITHIN_MS)
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body).toMatchObject({ degraded: true, error: 'Primary soul host unavailable; a fallback served', colony_size: 3 })
    expect(body.detail).toBe(`${primary.url}: ${fault === 'refuse' ? 'unreachable' : 'timeout'}`)
    expectOneLine('fallback')

    const back = await (await tree()).json()
    expect(back.degraded).toBeUndefined()
    expect(back.colony_size).toBe(1)
  })

  it.each(FAULTS)('every host %sd: 200 `degraded` with the zero-address root, in one deadline; then served again', async (fault) => {
    const { value: res, ms } = await whileDown([primary, fallback], fault, tree)
    expect(ms).toBeLessThan(ANSWER_WITHIN_MS)
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body).toMatchObject({ degraded: true, error: 'Soul host unavailable', colony_size: 0, agents: [], root: FALLBACK_ROOT })
    expectOneLine('none')

    expect((await (await tree()).json()).degraded).toBeUndefined()
  })
})
