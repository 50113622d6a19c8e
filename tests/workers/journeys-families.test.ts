// Seventeen families' journeys in workerd, as they ship (tests/workers/journeys.test.ts has the cross-family flow):
// each family's main happy path and its refusals (signed out, another user, bad input, replay), several requests
// per isolate, through the bundles wrangler uploads on the production drivers, with the fake providers the
// families call started first and handed to the Workers as configuration.
import { afterAll, describe, expect, it } from 'vitest'
import { CALENDAR_SCOPES } from '../../functions/calendar/google'
import { useFixture } from '../support/harness'
import { startCalendarServer } from '../support/calendar-server'
import { startCdpServer } from '../support/cdp-server'
import { startMuxServer } from '../support/mux-server'
import { startOidcServer } from '../support/oidc-server'
import { startRailwayServer } from '../support/railway-server'
import { COLONY, startSoulHost } from '../support/soul-host'
import { startStripeServer, stripeEnv } from '../support/stripe-server'
import { costSummary, LIMIT_MARGIN, startWorkerdPlatform, WORKERD_SKIP_REASON, workerdPlatformConfigured, WORKERS_LIMITS } from '../support/workerd-platform'
import { billingJourney } from './journeys/billing'
import { calendarJourney } from './journeys/calendar'
import { startChain } from './journeys/chain'
import { colonyJourney } from './journeys/colony'
import { devicesJourney } from './journeys/devices'
import { docsJourney } from './journeys/docs'
import { farcasterJourney } from './journeys/farcaster'
import { flowEnv, RAILWAY } from './journeys/flow'
import { filesJourney } from './journeys/files'
import { googleEnv } from './journeys/google'
import { healthJourney } from './journeys/health'
import { invitesJourney } from './journeys/invites'
import { oauthJourney } from './journeys/oauth'
import { passkeysJourney } from './journeys/passkeys'
import { radioJourney } from './journeys/radio'
import { skillsJourney } from './journeys/skills'
import { socialJourney } from './journeys/social'
import { stripeJourney } from './journeys/stripe'
import { walletJourney } from './journeys/wallet'
import { walletAuthJourney } from './journeys/wallet-auth'

if (!workerdPlatformConfigured) console.warn(`workerd journeys ${WORKERD_SKIP_REASON}`)

;(workerdPlatformConfigured ? describe : describe.skip)(workerdPlatformConfigured ? 'family journeys in workerd' : `family journeys in workerd (${WORKERD_SKIP_REASON})`, { timeout: 90_000 }, () => {
  // The fake providers first: their URLs are the Workers' configuration.
  const soul = useFixture(() => startSoulHost({ '/colony': { body: COLONY }, '/soul': { body: { active: true, mode: 'explore' } }, '/health': { body: { ok: true } } }))
  const oidc = useFixture(async () => {
    const server = await startOidcServer()
    // Google grants what the calendar asks for (granular consent is the calendar suite's concern).
    server.editTokens((body, req) => {
      if (req.grant_type === 'authorization_code' || req.grant_type === 'refresh_token') body.scope = CALENDAR_SCOPES.join(' ')
    })
    return server
  })
  const cal = useFixture(() => startCalendarServer())
  const stripe = useFixture(() => startStripeServer())
  const mux = useFixture(() => startMuxServer())
  const cdp = useFixture(() => startCdpServer())
  const chain = useFixture(() => startChain(), { timeout: 120_000 })
  // Agents run on Railway in production: skills reaches an agent's runtime through that provider.
  const railway = useFixture(() => startRailwayServer(RAILWAY))
  const p = useFixture(
    () =>
      startWorkerdPlatform({
        env: {
          SOUL_SERVICE_URL: soul.url,
          SOUL_SERVICE_TOKEN: 'soul-token',
          ...googleEnv(oidc),
          GOOGLE_CALENDAR_API_URL: cal.url,
          ...stripeEnv(stripe),
          ...mux.env,
          ...cdp.env,
          ...chain.env,
          ...flowEnv(railway),
        },
      }),
    { timeout: 240_000 },
  )

  healthJourney(p)
  docsJourney(p)
  invitesJourney(p)
  devicesJourney(p)
  socialJourney(p)
  colonyJourney(p, soul)
  filesJourney(p)
  oauthJourney(p, oidc)
  calendarJourney(p, oidc, cal)
  billingJourney(p, stripe)
  stripeJourney(p, stripe)
  skillsJourney(p)
  passkeysJourney(p)
  walletAuthJourney(p)
  farcasterJourney(p, chain)
  radioJourney(p, mux, chain)
  walletJourney(p, chain, cdp, stripe)

  afterAll(() => {
    console.log(`workerd cost per Worker (family journeys):\n${costSummary(p.costs).map((s) => JSON.stringify(s)).join('\n')}`)
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
