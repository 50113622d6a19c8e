import { z } from 'zod'
import { deadline } from '../../lib/deadline'
import { ApiError, peerUnavailable } from '../../lib/http/errors'
import { errorFields, log } from '../../lib/log'
import type { GoogleClient } from '../../lib/oidc/google'
import type { Interval } from './slots'

/**
 * Google Calendar over its REST API (v3) with fetch, and Google's OAuth token endpoint for the calendar grant.
 * Only the calls the calendar endpoints make: calendars.get, events.list/insert/patch/delete/quickAdd,
 * freebusy.query; token exchange and refresh.
 */

/** Events (create, change, delete, quick add) and reading: calendars.get, events.list and freebusy.query. */
export const CALENDAR_SCOPES = ['https://www.googleapis.com/auth/calendar.events', 'https://www.googleapis.com/auth/calendar.readonly']
/** One page of events.list (Google's own maximum is 2500). */
export const MAX_EVENTS = 250

export const calendarNotConnected = () => new ApiError('NOT_CONNECTED')
export const calendarUnavailable = () => peerUnavailable('PROVIDER_UNAVAILABLE', 'Calendar provider unavailable')
export const calendarNotConfigured = () => new ApiError('NOT_CONFIGURED', 'Calendar not configured')
export const eventNotFound = () => new ApiError('NOT_FOUND', 'Event not found')

/** The token endpoint said the refresh token is dead (`invalid_grant`: revoked, expired or never ours). */
export class GrantRevoked extends Error {
  override name = 'GrantRevoked'
}
/** The provider could not be reached or answered something other than the documented success. */
export class ProviderFailure extends Error {
  override name = 'ProviderFailure'
}

/** Google's answer: its status and its JSON (null for a 204, or an error answer that is not JSON). */
export interface GoogleAnswer {
  status: number
  ok: boolean
  body: unknown
}

/**
 * One request to Google, its answer read whole, within `timeoutMs` (`GOOGLE_TIMEOUT_MS`). A network failure, a timeout, or a success whose
 * body is not JSON is `ProviderFailure`.
 */
async function request(url: string | URL, init: RequestInit, what: string, timeoutMs: number): Promise<GoogleAnswer> {
  const bound = deadline(timeoutMs)
  try {
    let res: Response
    try {
      res = await fetch(url, { ...init, signal: bound.signal })
    } catch (e) {
      throw new ProviderFailure(bound.timedOut ? `${what}: no answer within ${timeoutMs} ms` : `${what} unreachable`, { cause: e })
    }
    if (res.status === 204) return { status: 204, ok: true, body: null }
    if (!res.ok) return { status: res.status, ok: false, body: await res.json().catch(() => null) }
    try {
      return { status: res.status, ok: true, body: await res.json() }
    } catch (e) {
      throw new ProviderFailure(`${what} answered ${res.status} with a body that is not JSON`, { cause: e })
    }
  } finally {
    bound.clear()
  }
}

// ---- OAuth token endpoint ----------------------------------------------------------------------------------

const TokenResponse = z.object({
  access_token: z.string().min(1).max(8192),
  refresh_token: z.string().min(1).max(8192).optional(),
  expires_in: z.coerce.number().positive().optional(),
  scope: z.string().max(4096).optional(),
})

export interface Tokens {
  accessToken: string
  /** Google sends one at the first consent (and with `prompt=consent`), usually not on refresh. */
  refreshToken: string | null
  expiresAt: Date | null
  /** The scopes granted, space-separated, when the provider says (Google does on every exchange). */
  scope?: string
}

const tokenRequest = (endpoint: string, params: Record<string, string>, timeoutMs: number) =>
  request(
    endpoint,
    { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body: new URLSearchParams(params) },
    'token endpoint',
    timeoutMs,
  )

function readTokens(answer: GoogleAnswer, what: string): Tokens {
  const parsed = TokenResponse.safeParse(answer.body)
  if (!parsed.success) throw new ProviderFailure(`${what}: token response without an access token`)
  const t = parsed.data
  return {
    accessToken: t.access_token,
    refreshToken: t.refresh_token ?? null,
    expiresAt: t.expires_in ? new Date(Date.now() + t.expires_in * 1000) : null,
    ...(t.scope !== undefined ? { scope: t.scope } : {}),
  }
}

/** Authorization code (with its PKCE verifier and the same redirect URI) for tokens; client_secret_post. */
export async function exchangeCode(endpoint: string, client: GoogleClient, code: string, redirectUri: string, verifier: string) {
  const answer = await tokenRequest(endpoint, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: redirectUri,
    client_id: client.id,
    client_secret: client.secret,
    code_verifier: verifier,
  }, client.timeoutMs)
  if (!answer.ok) throw new ProviderFailure(`code exchange answered ${answer.status}`)
  return readTokens(answer, 'code exchange')
}

/** A new access token from the refresh token. `invalid_grant` (RFC 6749 §5.2) is `GrantRevoked`. */
export async function refreshAccessToken(endpoint: string, client: GoogleClient, refreshToken: string) {
  const answer = await tokenRequest(endpoint, {
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: client.id,
    client_secret: client.secret,
  }, client.timeoutMs)
  if (!answer.ok) {
    const body = answer.body as { error?: unknown } | null
    if ((answer.status === 400 || answer.status === 401) && body?.error === 'invalid_grant') throw new GrantRevoked('refresh token revoked')
    throw new ProviderFailure(`refresh answered ${answer.status}`)
  }
  return readTokens(answer, 'refresh')
}

// ---- Calendar API ------------------------------------------------------------------------------------------

export interface CalendarRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE'
  path: string
  query?: Record<string, string>
  body?: unknown
}

/** One Calendar API request with a bearer token (see `request`). */
export function calendarFetch(apiUrl: string, accessToken: string, req: CalendarRequest, timeoutMs: number) {
  const url = new URL(`${apiUrl.replace(/\/+$/, '')}${req.path}`)
  for (const [k, v] of Object.entries(req.query ?? {})) url.searchParams.set(k, v)
  const headers: Record<string, string> = { authorization: `Bearer ${accessToken}`, accept: 'application/json' }
  if (req.body !== undefined) headers['content-type'] = 'application/json'
  return request(url, { method: req.method, headers, body: req.body === undefined ? undefined : JSON.stringify(req.body) }, `calendar ${req.method}`, timeoutMs)
}

/** Sends a Calendar API request with a live token (refreshing as needed) and answers its JSON, null for 204. */
export type CalendarCall = (req: CalendarRequest, opts?: { notFound?: () => ApiError }) => Promise<unknown>

/** Parses a Calendar API answer; one that is not the documented shape is the provider failing. */
function parse<T extends z.ZodType>(schema: T, body: unknown, what: string): z.infer<T> {
  const parsed = schema.safeParse(body)
  if (!parsed.success) {
    log.warn('calendar.unexpected_response', { what, ...errorFields(parsed.error) })
    throw calendarUnavailable()
  }
  return parsed.data
}

const path = (calendarId: string, ...rest: string[]) => ['/calendars', calendarId, ...rest].map((s, i) => (i ? encodeURIComponent(s) : s)).join('/')

/** calendars.get on `primary`: its real id and IANA time zone. */
export async function primaryCalendar(call: CalendarCall) {
  const body = await call({ method: 'GET', path: '/calendars/primary' })
  const c = parse(z.object({ id: z.string().min(1).max(1024), timeZone: z.string().min(1).max(128) }), body, 'calendars.get')
  return { calendarId: c.id, timezone: c.timeZone }
}

const EventTime = z.object({ dateTime: z.string().optional(), date: z.string().optional() }).optional()
const GoogleEvent = z.object({
  id: z.string().min(1),
  summary: z.string().optional(),
  location: z.string().optional(),
  start: EventTime,
  end: EventTime,
})
type GoogleEvent = z.infer<typeof GoogleEvent>

/**
 * Whether `scope` (a token response's, space-separated) grants every calendar scope. With granular consent a
 * user may untick some; a connection without them could not create events or read availability.
 */
export const grantsCalendar = (scope: string | undefined) => {
  if (scope === undefined) return true
  const granted = new Set(scope.split(' '))
  return CALENDAR_SCOPES.every((s) => granted.has(s) || granted.has('https://www.googleapis.com/auth/calendar'))
}

/** Output bounds (the documented maxima of the Calendar event schema). */
export const EVENT_LIMITS = { id: 1024, summary: 1024, location: 1024, time: 64 }

const time = (t: z.infer<typeof EventTime>) =>
  t?.dateTime ? { dateTime: t.dateTime.slice(0, EVENT_LIMITS.time) } : t?.date ? { date: t.date.slice(0, EVENT_LIMITS.time) } : {}

/** A Google event as the spec's "Calendar event": `id, summary, start{dateTime}, end{dateTime}, location` (all-day: `{date}`). */
export function toEvent(e: GoogleEvent) {
  return {
    id: e.id.slice(0, EVENT_LIMITS.id),
    summary: (e.summary ?? '').slice(0, EVENT_LIMITS.summary),
    start: time(e.start),
    end: time(e.end),
    ...(e.location ? { location: e.location.slice(0, EVENT_LIMITS.location) } : {}),
  }
}
export type CalendarEvent = ReturnType<typeof toEvent>

/** events.list: one page of single events (recurring ones expanded) between the two instants, by start time. */
export async function listEvents(call: CalendarCall, calendarId: string, timeMin: string, timeMax: string) {
  const body = await call({
    method: 'GET',
    path: path(calendarId, 'events'),
    query: { timeMin, timeMax, singleEvents: 'true', orderBy: 'startTime', maxResults: String(MAX_EVENTS) },
  })
  const list = parse(z.object({ timeZone: z.string().max(128).optional(), items: z.array(GoogleEvent).optional() }), body, 'events.list')
  return { events: (list.items ?? []).slice(0, MAX_EVENTS).map(toEvent), timezone: list.timeZone }
}

/** freebusy.query for one calendar: its busy intervals between the two instants. */
export async function busyIntervals(call: CalendarCall, calendarId: string, window: Interval, timeZone: string): Promise<Interval[]> {
  const body = await call({
    method: 'POST',
    path: '/freeBusy',
    body: { timeMin: new Date(window.start).toISOString(), timeMax: new Date(window.end).toISOString(), timeZone, items: [{ id: calendarId }] },
  })
  const Busy = z.object({ start: z.string(), end: z.string() })
  const res = parse(
    z.object({ calendars: z.record(z.string(), z.object({ busy: z.array(Busy).optional(), errors: z.array(z.unknown()).optional() })) }),
    body,
    'freebusy.query',
  )
  const mine = res.calendars[calendarId]
  if (!mine || mine.errors?.length) {
    log.warn('calendar.freebusy_error', { errors: mine?.errors?.length ?? 'calendar missing' })
    throw calendarUnavailable()
  }
  return (mine.busy ?? [])
    .map((b) => ({ start: Date.parse(b.start), end: Date.parse(b.end) }))
    .filter((b) => Number.isFinite(b.start) && Number.isFinite(b.end))
}

export interface EventInput {
  title?: string
  description?: string
  location?: string
  start?: string
  end?: string
  attendees?: string[]
}

/** Our field names to Google's event resource (only the fields given). */
function eventBody(input: EventInput) {
  return {
    ...(input.title !== undefined ? { summary: input.title } : {}),
    ...(input.description !== undefined ? { description: input.description } : {}),
    ...(input.location !== undefined ? { location: input.location } : {}),
    ...(input.start !== undefined ? { start: { dateTime: input.start } } : {}),
    ...(input.end !== undefined ? { end: { dateTime: input.end } } : {}),
    ...(input.attendees !== undefined ? { attendees: input.attendees.map((email) => ({ email })) } : {}),
  }
}

/** events.insert. */
export async function insertEvent(call: CalendarCall, calendarId: string, input: EventInput) {
  const body = await call({ method: 'POST', path: path(calendarId, 'events'), body: eventBody(input) })
  return toEvent(parse(GoogleEvent, body, 'events.insert'))
}

/** events.patch: only the fields given change. */
export async function patchEvent(call: CalendarCall, calendarId: string, eventId: string, input: EventInput) {
  const body = await call({ method: 'PATCH', path: path(calendarId, 'events', eventId), body: eventBody(input) }, { notFound: eventNotFound })
  return toEvent(parse(GoogleEvent, body, 'events.patch'))
}

/** events.delete (Google answers 204; an unknown or already deleted event is 404 or 410). */
export async function deleteEvent(call: CalendarCall, calendarId: string, eventId: string) {
  await call({ method: 'DELETE', path: path(calendarId, 'events', eventId) }, { notFound: eventNotFound })
}

/** events.quickAdd: Google parses the text into an event. */
export async function quickAddEvent(call: CalendarCall, calendarId: string, text: string) {
  const body = await call({ method: 'POST', path: path(calendarId, 'events', 'quickAdd'), query: { text } })
  return toEvent(parse(GoogleEvent, body, 'events.quickAdd'))
}
