// Every family's journey in workerd, as it ships: the bundles wrangler uploads, routed by wrangler.toml's patterns,
// on the production drivers against the suite's peers (tests/support/workerd-platform.ts). Each request's cost in
// workerd (subrequests, CPU) is recorded and held to the Workers paid-plan limits with margin.
import { afterAll, describe, expect, it } from 'vitest'
import { useFixture } from '../support/harness'
import { costSummary, LIMIT_MARGIN, startWorkerdPlatform, WORKERD_SKIP_REASON, workerdPlatformConfigured, WORKERS_LIMITS } from '../support/workerd-platform'
import { pluginsEnv, startPluginServer } from '../families/gateway/helpers'
import { startPaymentChain } from '../support/payment-chain'
import { startRailwayServer } from '../support/railway-server'
import { accountJourneys } from './journeys/accounts'
import { flowEnv, flowJourneys, RAILWAY } from './journeys/flow'

if (!workerdPlatformConfigured) console.warn(`workerd journeys ${WORKERD_SKIP_REASON}`)

;(workerdPlatformConfigured ? describe : describe.skip)(workerdPlatformConfigured ? 'journeys in workerd' : `journeys in workerd (${WORKERD_SKIP_REASON})`, () => {
  const railway = useFixture(() => startRailwayServer(RAILWAY))
  const chain = useFixture(() => startPaymentChain(), { timeout: 60_000 })
  const plugins = useFixture(() => startPluginServer())
  const p = useFixture(() => startWorkerdPlatform({ env: { ...flowEnv(railway), ...chain.env, ...pluginsEnv(plugins), GATEWAY_UPSTREAM_TIMEOUT_MS: '10000' } }), { timeout: 240_000 })

  accountJourneys(p)
  flowJourneys(p, railway, chain, plugins)

  afterAll(() => {
    console.log(`workerd cost per Worker (journeys):\n${costSummary(p.costs).map((s) => JSON.stringify(s)).join('\n')}`)
    // Every request the journeys sent stays far inside a Worker's limits.
    for (const cost of p.costs) {
      expect(cost.subrequests, `${cost.method} ${cost.path} subrequests`).toBeLessThanOrEqual(WORKERS_LIMITS.subrequests * LIMIT_MARGIN)
      expect(cost.cpuMs, `${cost.method} ${cost.path} CPU ms`).toBeLessThanOrEqual(WORKERS_LIMITS.cpuMs * LIMIT_MARGIN)
    }
  })

  it('routes every request through the Worker its pattern names', () => {
    expect(p.costs.length).toBeGreaterThan(0)
  })
})
