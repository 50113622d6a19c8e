// Seventeen families' journeys in workerd, as they ship (tests/workers/journeys.test.ts has the cross-family flow):
// each family's main happy path and its refusals (signed out, another user, bad input, replay), several requests
// per isolate, through the bundles wrangler uploads on the production drivers, with the fake providers the
// families call started first and handed to the Workers as configuration.
import { afterAll, describe, expect, it } from 'vitest'
import { CALENDAR_SCOPES } from '../../functions/calendar/google'
import { useFixture } from '../support/harness'
import { startCalendarServer } from '../support/calendar-server'
import { startOidcServer } from '../support/oidc-server'
import { COLONY, startSoulHost } from '../support/soul-host'
import { costSummary, LIMIT_MARGIN, startWorkerdPlatform, WORKERD_SKIP_REASON, workerdPlatformConfigured, WORKERS_LIMITS } from '../support/workerd-platform'
import { calendarJourney } from './journeys/calendar'
import { colonyJourney } from './journeys/colony'
import { devicesJourney } from './journeys/devices'
import { docsJourney } from './journeys/docs'
import { filesJourney } from './journeys/files'
import { googleEnv } from './journeys/google'
import { healthJourney } from './journeys/health'
import { invitesJourney } from './journeys/invites'
import { oauthJourney } from './journeys/oauth'
import { socialJourney } from './journeys/social'

if (!workerdPlatformConfigured) console.warn(`workerd journeys ${WORKERD_SKIP_REASON}`)

/** The fake providers first (their URLs are the Workers' configuration), then the platform. */
async function startFamiliesPlatform() {
  const closers: Array<() => unknown> = []
  try {
    const soul = await startSoulHost({ '/colony': { body: COLONY }, '/soul': { body: { active: true, mode: 'explore' } }, '/health': { body: { ok: true } } })
    closers.push(() => soul.close())
    const oidc = await startOidcServer()
    closers.push(() => oidc.close())
    // Google grants what the calendar asks for (granular consent is the calendar suite's concern).
    oidc.editTokens((body, req) => {
      if (req.grant_type === 'authorization_code' || req.grant_type === 'refresh_token') body.scope = CALENDAR_SCOPES.join(' ')
    })
    const cal = await startCalendarServer()
    closers.push(() => cal.close())
    const p = await startWorkerdPlatform({
      env: {
        SOUL_SERVICE_URL: soul.url,
        SOUL_SERVICE_TOKEN: 'soul-token',
        ...googleEnv(oidc),
        GOOGLE_CALENDAR_API_URL: cal.url,
      },
    })
    const closePlatform = p.close
    return Object.assign(p, {
      fakes: { soul, oidc, cal },
      async close() {
        await closePlatform()
        for (const fn of closers.reverse()) await Promise.resolve(fn()).catch(() => {})
      },
    })
  } catch (e) {
    for (const fn of closers.reverse()) await Promise.resolve(fn()).catch(() => {})
    throw e
  }
}

;(workerdPlatformConfigured ? describe : describe.skip)(workerdPlatformConfigured ? 'family journeys in workerd' : `family journeys in workerd (${WORKERD_SKIP_REASON})`, () => {
  const p = useFixture(startFamiliesPlatform, { timeout: 240_000 })

  healthJourney(p)
  docsJourney(p)
  invitesJourney(p)
  devicesJourney(p)
  socialJourney(p)
  colonyJourney(p, () => p.fakes.soul)
  filesJourney(p)
  oauthJourney(p, () => p.fakes.oidc)
  calendarJourney(p, () => p.fakes)

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
