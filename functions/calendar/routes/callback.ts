import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { completeConnection, ConnectFailure, DASHBOARD_CALENDAR } from '../oauth'
import type { AppEnv } from '../../../lib/context'
import { noStore } from '../../../lib/http/no-store'
import { errorFields, log } from '../../../lib/log'

const Query = z.object({
  code: z.string().max(2048).optional(),
  state: z.string().max(1024).optional(),
  error: z.string().max(256).optional(),
})

export const route = createRoute({
  method: 'get',
  path: '/api/calendar/callback',
  operationId: 'finishCalendarConnect',
  security: [],
  middleware: [noStore] as const,
  tags: ['Calendar'],
  summary: 'Google Calendar OAuth callback',
  description:
    'Called by Google. Checks the state (an HS256 JWT under `SESSION_SECRET`, audience `calendar-oauth-state`, at most 10 minutes old, single use, and ' +
    'the browser must send a session of the user the state names: without one, or signed in as someone else, ' +
    '`invalid_state` and the state is not used up), exchanges the code (with its ' +
    'PKCE verifier), reads the primary calendar\'s id and time zone and stores the connection for the user the state ' +
    'names, tokens sealed. Always a redirect, never JSON: `/dashboard/calendar?connected=true`, or ' +
    '`/dashboard/calendar?error=<value>` with the provider\'s `error` (OAuth error characters, at most 64; else ' +
    '`unknown`; `access_denied` too when the calendar scopes were not all granted), `no_code`, `missing_state`, `invalid_state`, `token_failed` or `unknown` (also when Google is not configured).',
  request: { query: Query },
  responses: {
    302: { description: 'To `/dashboard/calendar?connected=true` or `/dashboard/calendar?error=<value>`' },
  },
})

function back(c: Context<AppEnv>, outcome: { connected: true } | { error: string }) {
  const query = 'error' in outcome ? `error=${encodeURIComponent(outcome.error)}` : 'connected=true'
  return c.redirect(`${c.var.services.config.baseUrl}${DASHBOARD_CALENDAR}?${query}`, 302)
}

/** Even a malformed query ends on the dashboard, never as a JSON 400. */
export const hook = (result: { success: boolean }, c: Context<AppEnv>) => (result.success ? undefined : back(c, { error: 'unknown' }))

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  try {
    await completeConnection(c, c.req.valid('query'))
    return back(c, { connected: true })
  } catch (e) {
    if (e instanceof ConnectFailure) return back(c, { error: e.code })
    log.error('calendar.callback_failed', { requestId: c.var.requestId, ...errorFields(e) })
    return back(c, { error: 'unknown' })
  }
}
