import { eq } from 'drizzle-orm'
import { expect } from 'vitest'
import { CALENDAR_SCOPES } from '../../../functions/calendar/google'
import { calendarConnections } from '../../../schema'
import { startCalendarServer, type CalendarServer } from '../../support/calendar-server'
import { createHarness, type Harness, type SeededUser } from '../../support/harness'
import { startOidcServer, type OidcServer } from '../../support/oidc-server'
import { call } from '../../support/requests'
import { googleEnv, location } from '../oauth/helpers'

export { CLIENT_ID, CLIENT_SECRET, location } from '../oauth/helpers'
export const DASHBOARD = 'http://localhost:3000'
export const CALLBACK = 'http://localhost/api/calendar/callback'
export const SESSION_SECRET = 'test-session-secret'

export interface Stack {
  h: Harness
  oidc: OidcServer
  cal: CalendarServer
  close(): Promise<void>
}

/** The loopback Google (OAuth provider and Calendar API) and a harness pointed at both. */
export async function startStack(env: Record<string, string | undefined> = {}): Promise<Stack> {
  const oidc = await startOidcServer()
  // The mock signs identical claims within a second identically: a jti keeps every access token distinct.
  oidc.issuer.on('beforeSigning', (token: { payload: Record<string, unknown> }) => {
    token.payload.jti = crypto.randomUUID()
  })
  // Google answers every exchange and refresh with the scopes granted: all the calendar asked for, by default.
  grantScopes(oidc, CALENDAR_SCOPES.join(' '))
  const cal = await startCalendarServer()
  const h = await createHarness({ env: { ...googleEnv(oidc), GOOGLE_CALENDAR_API_URL: cal.url, ...env } })
  return {
    h,
    oidc,
    cal,
    async close() {
      await h.close()
      await oidc.close()
      await cal.close()
    },
  }
}

/** The scopes the provider's next token responses say were granted. */
export const grantScopes = (oidc: OidcServer, scope: string) =>
  oidc.editTokens((body, req) => {
    if (req.grant_type === 'authorization_code' || req.grant_type === 'refresh_token') body.scope = scope
  })

/** A calendar id and zone for `user` in the fake (set as the primary before connecting). */
export const calendarOf = (user: SeededUser, timeZone = 'America/New_York') => ({ id: `cal-${user.email}`, timeZone })

/** `POST /api/calendar {action: 'connect'}` → the consent URL. */
export async function connectUrl(h: Harness, user: SeededUser) {
  const res = await call(h, 'POST', '/api/calendar', { user, body: { action: 'connect' } })
  expect(res.status).toBe(200)
  return new URL(((await res.json()) as { authUrl: string }).authUrl)
}

/** The provider's authorize endpoint (the user consents): the callback URL with `code` and `state`. */
export async function authorize(url: URL) {
  const res = await fetch(url, { redirect: 'manual' })
  expect(res.status).toBe(302)
  return location(res)
}

/** `GET /api/calendar/callback?...` as the browser sends it (with its session cookie, if any). */
export const callback = (h: Harness, params: URLSearchParams | Record<string, string>, cookie?: string) =>
  h.web.request(`/api/calendar/callback?${new URLSearchParams(params)}`, { headers: cookie ? { cookie } : {} })

/** The whole round trip: connect, consent, callback (with the user's cookie). */
export async function connect(s: Stack, user: SeededUser, timeZone = 'America/New_York') {
  s.cal.setPrimary(calendarOf(user, timeZone))
  const back = await authorize(await connectUrl(s.h, user))
  const res = await callback(s.h, back.searchParams, user.cookie)
  expect(landing(res)).toBe('connected')
  return res
}

/** Where a callback sent the browser: `connected` or `error:<value>`; always the dashboard's calendar page. */
export function landing(res: Response) {
  expect(res.status).toBe(302)
  const url = location(res)
  expect(`${url.origin}${url.pathname}`).toBe(`${DASHBOARD}/dashboard/calendar`)
  if (url.searchParams.get('connected') === 'true') return 'connected'
  return `error:${url.searchParams.get('error')}`
}

export const connectionRow = async (h: Harness, userId: string) =>
  (await h.db.select().from(calendarConnections).where(eq(calendarConnections.userId, userId)))[0]

/** The access token is due: the next call refreshes it. */
export const expireToken = (h: Harness, userId: string) =>
  h.db.update(calendarConnections).set({ tokenExpiresAt: new Date(Date.now() - 1000) }).where(eq(calendarConnections.userId, userId))

export const refreshRequests = (oidc: OidcServer) => oidc.tokenRequests.filter((r) => r.grant_type === 'refresh_token').length

export const getCalendar = (h: Harness, user: SeededUser | undefined, query: string) => call(h, 'GET', `/api/calendar${query}`, { user })
export const postCalendar = (h: Harness, user: SeededUser | undefined, body: unknown) => call(h, 'POST', '/api/calendar', { user, body })
