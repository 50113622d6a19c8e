import { describe, expect, it } from 'vitest'
import type { Config } from '../../../lib/config'
import { discoveryCacheKey } from '../../../lib/oidc/discovery'
import { expectPeerUnavailable, type FaultProxy, startFaultProxy, underFault } from '../../support/fault-proxy'
import { FailingKv } from '../../support/failing-kv'
import { useFixture, withServices } from '../../support/harness'
import { useLogLines } from '../../support/log-lines'
import { call } from '../../support/requests'
import { calendarOf, connect, expireToken, getCalendar, location, postCalendar, startStack } from './helpers'

/** Each call to Google gives up after this long (`GOOGLE_TIMEOUT_MS`): a Google that never answers fails the request in time. */
const GOOGLE_TIMEOUT_MS = 400
/** The bound on an answer while Google is down: the call's deadline, and room for a loaded machine. */
const ANSWER_WITHIN_MS = GOOGLE_TIMEOUT_MS + 1500
const UNAVAILABLE = { error: 'Calendar provider unavailable', code: 'PROVIDER_UNAVAILABLE' }
const FAULTS = ['refuse', 'blackhole'] as const
const CREATE = { action: 'create-event', title: 'Sync', start: '2026-03-05T10:00:00Z', end: '2026-03-05T11:00:00Z' }

/**
 * Google behind fault proxies, refused (connections refused) and blackholed (accepted, never answered), README "When
 * a dependency fails": the Calendar API in front of every calendar call, the discovery document in front of
 * connecting a calendar and Google sign-in. Calendar routes answer 503 `PROVIDER_UNAVAILABLE` with `Retry-After`
 * within `GOOGLE_TIMEOUT_MS`, nothing created or changed, one log line naming Google; sign-in goes to the spec's
 * `/login?error=GoogleUnavailable`; the same requests succeed once Google is back.
 */
const s = useFixture(async () => {
  const stack = await startStack()
  const api = await startFaultProxy({ target: stack.cal.url, mode: 'http' })
  const discovery = await startFaultProxy({ target: stack.oidc.discoveryUrl, mode: 'http' })
  const config = stack.h.services.config as Config
  Object.assign(config, {
    GOOGLE_CALENDAR_API_URL: `${api.url}${new URL(stack.cal.url).pathname}`,
    GOOGLE_DISCOVERY_URL: `${discovery.url}${new URL(stack.oidc.discoveryUrl).pathname}`,
  })
  await connect(stack, stack.h.users.alice)
  return {
    ...stack,
    api,
    discovery,
    config,
    async close() {
      await api.close()
      await discovery.close()
      await stack.close()
    },
  }
})
const logs = useLogLines()

/** Runs `fn` with `proxy` under `fault` and Google's short deadline (the calls that succeed keep the default). */
async function whileDown<T>(proxy: FaultProxy, fault: (typeof FAULTS)[number], fn: () => T | Promise<T>) {
  const saved = s.config.GOOGLE_TIMEOUT_MS
  s.config.GOOGLE_TIMEOUT_MS = GOOGLE_TIMEOUT_MS
  try {
    return await underFault(proxy, fault, fn)
  } finally {
    s.config.GOOGLE_TIMEOUT_MS = saved
  }
}

const expectUnavailable = (res: Response, ms: number, event: string) =>
  expectPeerUnavailable(logs, res, ms, { body: UNAVAILABLE, withinMs: ANSWER_WITHIN_MS, event, dependency: 'google' })

describe('calendar while the Google Calendar API is down', () => {
  const CALLS = [
    ['list', () => getCalendar(s.h, s.h.users.alice, '?action=list')],
    ['availability', () => getCalendar(s.h, s.h.users.alice, '?action=availability')],
    ['create-event', () => postCalendar(s.h, s.h.users.alice, CREATE)],
    ['quick-add', () => postCalendar(s.h, s.h.users.alice, { action: 'quick-add', text: 'Lunch' })],
  ] as const

  for (const fault of FAULTS) {
    it.each(CALLS)(`%s while the API is ${fault}d → 503 in time, nothing created; then it answers`, async (_name, send) => {
      const events = s.cal.events(calendarOf(s.h.users.alice).id).length
      const { value: res, ms } = await whileDown(s.api, fault, send)
      await expectUnavailable(res, ms, 'calendar.provider_failed')
      expect(s.cal.events(calendarOf(s.h.users.alice).id).length).toBe(events)

      const again = await send()
      expect(again.status, await again.clone().text()).toBeLessThan(300)
    })
  }
})

describe("Google's discovery document down", () => {
  const forget = () => s.h.services.kv.del(discoveryCacheKey(s.config.GOOGLE_DISCOVERY_URL!))

  it.each(FAULTS)('connecting a calendar while discovery is %sd → 503 in time; then the consent URL', async (fault) => {
    await forget()
    const connectCall = () => call(s.h, 'POST', '/api/calendar', { user: s.h.users.bob, body: { action: 'connect' } })
    const { value: res, ms } = await whileDown(s.discovery, fault, connectCall)
    await expectUnavailable(res, ms, 'calendar.discovery_failed')

    const again = await connectCall()
    expect(again.status).toBe(200)
    expect((await again.json()).authUrl).toMatch(/^http/)
  })

  it.each(FAULTS)('Google sign-in while discovery is %sd → 302 to /login?error=GoogleUnavailable in time; then to Google', async (fault) => {
    await forget()
    const start = () => s.h.web.request('/api/auth/google')
    const { value: res, ms } = await whileDown(s.discovery, fault, start)
    expect(ms).toBeLessThan(ANSWER_WITHIN_MS)
    expect(res.status).toBe(302)
    const to = location(res)
    expect(to.pathname).toBe('/login')
    expect(to.searchParams.get('error')).toBe('GoogleUnavailable')
    logs.expectOne('oauth.google_start_failed', { dependency: 'google' })

    const again = await start()
    expect(again.status).toBe(302)
    expect(location(again).pathname).not.toBe('/login')
  })
})

describe('a store of ours failing inside a calendar call', () => {
  it("the kv store down while an expired token is refreshed → its own 503 KV_UNAVAILABLE, not Google's; then the refresh goes through", async () => {
    const { alice } = s.h.users
    await expireToken(s.h, alice.id)
    await s.h.services.kv.del(discoveryCacheKey(s.config.GOOGLE_DISCOVERY_URL!))
    // Only the kv store the refresh reads Google's discovery document from is down (the limiter keeps its own).
    const kv = new FailingKv(s.h.services.kv as never)
    kv.down = true
    const res = await withServices(s.h, { kv }, async () => getCalendar(s.h, alice, '?action=list'))
    expect(res.status).toBe(503)
    expect(await res.json()).toEqual({ error: expect.any(String), code: 'KV_UNAVAILABLE' })
    expect(logs.events('calendar.provider_failed')).toEqual([])
    expect((await getCalendar(s.h, alice, '?action=list')).status).toBe(200)
  })
})
