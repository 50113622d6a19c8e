import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { readSession } from '../../../lib/auth/session'
import { isConnected, openCalendar } from '../connection'
import { busyIntervals, listEvents } from '../google'
import { authorizationUrl, DASHBOARD_CALENDAR } from '../oauth'
import { dayWindow, isCalendarDate, isTimeZone, splitSlots, todayIn } from '../slots'
import type { AppEnv } from '../../../lib/context'
import { noStore } from '../../../lib/http/no-store'
import { ApiError } from '../../../lib/http/errors'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { CalendarAvailabilitySchema, CalendarEventsSchema, CalendarInfoSchema, CalendarStatusSchema } from '../schemas'

export const GET_ACTIONS = ['status', 'auth', 'list', 'availability'] as const
const DAY_MS = 24 * 60 * 60 * 1000
const LIST_WINDOW_MS = 30 * DAY_MS

const instant = (name: string) =>
  z.iso
    .datetime({ offset: true, error: `${name} must be an ISO 8601 date-time with a time zone (e.g. 2026-03-02T09:00:00Z)` })
    .max(64)
    .optional()

const Query = z.object({
  action: z.string().max(32).optional().openapi({ description: '`status`, `auth`, `list` or `availability`; none for the summary', example: 'list' }),
  start: instant('start').openapi({ description: '`list`: from this instant (default now)' }),
  end: instant('end').openapi({ description: '`list`: until this instant (default `start` + 30 days, i.e. now + 30 days)' }),
  date: z
    .string()
    .max(10)
    .refine(isCalendarDate, 'date must be a calendar date written YYYY-MM-DD')
    .optional()
    .openapi({ description: "`availability`: the day (default today in the calendar's time zone)", example: '2026-03-02' }),
})

export const route = createRoute({
  method: 'get',
  path: '/api/calendar',
  operationId: 'getCalendar',
  // `status` and `auth` answer without a session (false; the login page); everything else needs one.
  security: [{ session: [] }, {}] as { session?: string[] }[],
  middleware: [noStore] as const, // the answer depends on whether a session came
  tags: ['Calendar'],
  summary: 'Google Calendar: summary, connection status, consent redirect, events, availability',
  description:
    'By `action`: none -> `{message, actions}`; `status` -> `{connected}` (false without a session, and when the stored tokens ' +
    "no longer open with this server's keys: connect again); `auth` -> 302 to " +
    "Google's consent screen (to `/login?callbackUrl=/dashboard/calendar` without a session); `list` -> the events " +
    'between `start` and `end` (one page of at most 250, recurring events expanded, by start time) and the calendar\'s ' +
    'time zone; `availability` -> the one-hour slots 09:00-23:00 of `date` in the calendar\'s time zone, split into ' +
    'available and busy (a slot overlapping any busy time is busy), with offsets. `list` and `availability` need a ' +
    'connected calendar; an expired Google token is refreshed once and stored, a revoked grant marks the calendar ' +
    'disconnected (401 `NOT_CONNECTED`).',
  request: { query: Query },
  responses: {
    200: ok(z.union([CalendarInfoSchema, CalendarStatusSchema, CalendarEventsSchema, CalendarAvailabilitySchema]), 'By action'),
    302: { description: "`auth`: to Google's consent screen, or to the login page without a session" },
    400: errorResponse('Unknown `action` (`INVALID_ACTION`); a malformed `start`, `end` or `date`, or `end` not after `start` (`VALIDATION`)'),
    401: errorResponse('No session (`UNAUTHORIZED`); `Calendar not connected` (`NOT_CONNECTED`)'),
    503: errorResponse('Google unreachable or failing (`PROVIDER_UNAVAILABLE`); or the Google OAuth client or `SESSION_SECRET` not configured (`NOT_CONFIGURED`)'),
  },
})

const unauthorized = () => new ApiError('UNAUTHORIZED')

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const query = c.req.valid('query')
  const action = query.action || undefined
  if (action !== undefined && !(GET_ACTIONS as readonly string[]).includes(action)) {
    throw new ApiError('INVALID_ACTION')
  }
  const user = await readSession(c)
  if (action === 'status') return c.json({ connected: user ? await isConnected(c, user.id) : false }, 200)
  if (action === 'auth') {
    const { baseUrl } = c.var.services.config
    if (!user) return c.redirect(`${baseUrl}/login?callbackUrl=${DASHBOARD_CALENDAR}`, 302)
    return c.redirect(await authorizationUrl(c, user.id), 302)
  }
  if (!user) throw unauthorized()
  if (action === undefined) {
    return c.json({ message: 'Google Calendar: connect it with action=auth, then list events or check availability', actions: ['auth', 'list', 'availability'] as const }, 200)
  }

  const calendar = await openCalendar(c, user.id)
  const timezone = isTimeZone(calendar.timezone) ? calendar.timezone : 'UTC'
  if (action === 'list') {
    const start = query.start ? Date.parse(query.start) : Date.now()
    const end = query.end ? Date.parse(query.end) : start + LIST_WINDOW_MS
    if (!(end > start)) throw new ApiError('VALIDATION', { message: 'end must be after start', extra: { issues: [{ path: 'end', message: 'end must be after start' }] } })
    const list = await listEvents(calendar.call, calendar.calendarId, new Date(start).toISOString(), new Date(end).toISOString())
    return c.json({ events: list.events, timezone: list.timezone ?? timezone }, 200)
  }
  const date = query.date ?? todayIn(timezone)
  const busy = await busyIntervals(calendar.call, calendar.calendarId, dayWindow(timezone, date), timezone)
  return c.json({ ...splitSlots(timezone, date, busy), date }, 200)
}
