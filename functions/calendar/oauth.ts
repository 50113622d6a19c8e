import type { Context } from 'hono'
import { readSession } from '../../lib/auth/session'
import type { AppContext, AppEnv } from '../../lib/context'
import { errorFields, log } from '../../lib/log'
import { getGoogleDiscovery, googleClient } from '../../lib/oidc/google'
import { calendarFetch, calendarUnavailable, CALENDAR_SCOPES, exchangeCode, grantsCalendar, primaryCalendar, type CalendarCall, type CalendarRequest } from './google'
import { calendarClient, saveConnection } from './connection'
import { issueState, pkceChallenge, pkceVerifier, spendState, verifyState } from './state'

/** Where the dashboard shows the calendar: every callback ends there, connected or with `?error=`. */
export const DASHBOARD_CALENDAR = '/dashboard/calendar'
/** The callback's own failures (besides a provider's `error`, passed on sanitised). */
export const CALLBACK_ERRORS = ['no_code', 'missing_state', 'invalid_state', 'token_failed', 'unknown'] as const
export type CallbackError = (typeof CALLBACK_ERRORS)[number]

/** Thrown inside the callback; the route turns it into the `?error=` redirect. */
export class ConnectFailure extends Error {
  constructor(readonly code: string) {
    super(code)
  }
}

/** A provider's `error` as the dashboard receives it: an OAuth error code's characters, bounded; else `unknown`. */
export const providerError = (error: string) => (/^[A-Za-z0-9_.-]{1,64}$/.test(error) ? error : 'unknown')

/** The registered redirect URI: PUBLIC_URL when set, else the request's own origin (as Google sign-in does). */
export function calendarCallbackUrl(c: AppContext) {
  const base = c.var.services.config.PUBLIC_URL ?? new URL(c.req.url).origin
  return `${base.replace(/\/+$/, '')}/api/calendar/callback`
}

/**
 * Google's consent screen for `userId`'s calendar: offline access (a refresh token), `prompt=consent` (so one is
 * sent even on a second connect), PKCE S256, and a signed state naming the user. 503 when Google is not
 * configured; 503 `PROVIDER_UNAVAILABLE` when its discovery document cannot be had.
 */
export async function authorizationUrl(c: AppContext, userId: string) {
  const { kv, config } = c.var.services
  const client = calendarClient(config)
  let endpoint: string
  try {
    endpoint = (await getGoogleDiscovery(kv, config)).authorization_endpoint
  } catch (e) {
    log.warn('calendar.discovery_failed', { dependency: 'google', ...errorFields(e) })
    throw calendarUnavailable()
  }
  const { state, nonce } = await issueState(client.sessionSecret, userId)
  const url = new URL(endpoint)
  const params = {
    client_id: client.id,
    redirect_uri: calendarCallbackUrl(c),
    response_type: 'code',
    scope: CALENDAR_SCOPES.join(' '),
    access_type: 'offline',
    prompt: 'consent',
    include_granted_scopes: 'true',
    state,
    code_challenge: await pkceChallenge(await pkceVerifier(client.sessionSecret, nonce)),
    code_challenge_method: 'S256',
  }
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v)
  return url.toString()
}

export interface CallbackQuery {
  code?: string
  state?: string
  error?: string
}

/**
 * The callback's work, in the order its failures are reported: not configured (`unknown`), the provider's
 * `error`, `no_code`, `missing_state`, `invalid_state` (signature, 10 minutes, the browser must send a session of
 * the state's user, then single use), `token_failed` (discovery or token endpoint), `unknown`
 * (reading the primary calendar, storing); `access_denied` also when the calendar scopes were not all granted.
 * The connection is stored for the user the state names.
 */
export async function completeConnection(c: Context<AppEnv>, query: CallbackQuery) {
  const { config, kv, db } = c.var.services
  const client = googleClient(config)
  if (!client) throw new ConnectFailure('unknown')
  if (query.error) throw new ConnectFailure(providerError(query.error))
  if (!query.code) throw new ConnectFailure('no_code')
  if (!query.state) throw new ConnectFailure('missing_state')

  const state = await verifyState(client.sessionSecret, query.state)
  if (!state) throw new ConnectFailure('invalid_state')
  // Bound to the user's own browser: without a session, or signed in as someone else, the connect cannot be
  // finished (nor burned). Otherwise a signed-out victim could be made to attach their calendar to an attacker's
  // account by opening the attacker's consent link (OAuth connect CSRF).
  const browser = await readSession(c)
  if (!browser || browser.id !== state.userId) throw new ConnectFailure('invalid_state')
  if (!(await spendState(kv, state))) throw new ConnectFailure('invalid_state')

  let tokens
  try {
    const discovery = await getGoogleDiscovery(kv, config)
    tokens = await exchangeCode(discovery.token_endpoint, client, query.code, calendarCallbackUrl(c), await pkceVerifier(client.sessionSecret, state.nonce))
  } catch (e) {
    log.warn('calendar.token_exchange_failed', { dependency: 'google', ...errorFields(e) })
    throw new ConnectFailure('token_failed')
  }
  // Consent given without the calendar scopes (granular consent): as if access had been denied.
  if (!grantsCalendar(tokens.scope)) throw new ConnectFailure('access_denied')

  // The fresh token needs no refresh: calls go straight to Google, any failure is `unknown`.
  const call: CalendarCall = async (req: CalendarRequest) => {
    const answer = await calendarFetch(config.GOOGLE_CALENDAR_API_URL, tokens.accessToken, req, config.GOOGLE_TIMEOUT_MS)
    if (!answer.ok) throw new Error(`calendars.get answered ${answer.status}`)
    return answer.body
  }
  const primary = await primaryCalendar(call)
  await saveConnection(db, config, { userId: state.userId, ...primary, tokens })
  log.info('calendar.connected', { userId: state.userId })
}
