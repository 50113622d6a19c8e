import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { listen } from './loopback'

/**
 * A stand-in for the Google Calendar API v3 (a third-party API with no local peer), only the calls the calendar
 * family makes, with Google's documented shapes: calendars.get, events.list (timeMin/timeMax, singleEvents,
 * orderBy=startTime, maxResults), events.insert, events.patch, events.delete (204; 404 unknown, 410 deleted),
 * events.quickAdd (`text` query parameter), freebusy.query. Errors are Google's `{error: {code, message, errors,
 * status}}`. Bearer tokens are accepted until `revokeSeenTokens()` (then 401 `authError`, as for an expired
 * token); `fail(status)` makes every call answer that status (a Google that does not answer: the fault proxy).
 * The base URL is `<url>` = `http://127.0.0.1:<port>/calendar/v3`.
 */

export interface FakeEvent {
  kind: 'calendar#event'
  etag: string
  id: string
  status: 'confirmed'
  htmlLink: string
  created: string
  updated: string
  summary?: string
  description?: string
  location?: string
  start: { dateTime?: string; date?: string; timeZone?: string }
  end: { dateTime?: string; date?: string; timeZone?: string }
  attendees?: Array<{ email: string; responseStatus: string }>
  iCalUID: string
  transparency?: 'opaque' | 'transparent'
}

export interface CalendarRequestLog {
  method: string
  path: string
  query: Record<string, string>
  body: unknown
  token: string | null
}

const PREFIX = '/calendar/v3'
const reasons: Record<number, { reason: string; message: string; status: string }> = {
  400: { reason: 'badRequest', message: 'Bad Request', status: 'INVALID_ARGUMENT' },
  401: { reason: 'authError', message: 'Invalid Credentials', status: 'UNAUTHENTICATED' },
  403: { reason: 'forbidden', message: 'Forbidden', status: 'PERMISSION_DENIED' },
  404: { reason: 'notFound', message: 'Not Found', status: 'NOT_FOUND' },
  410: { reason: 'deleted', message: 'Resource has been deleted', status: 'NOT_FOUND' },
  500: { reason: 'backendError', message: 'Backend Error', status: 'INTERNAL' },
  503: { reason: 'backendError', message: 'Backend Error', status: 'UNAVAILABLE' },
}

function sendError(res: ServerResponse, code: number) {
  const r = reasons[code] ?? reasons[500]
  const errors = [{ domain: 'global', reason: r.reason, message: r.message, ...(code === 401 ? { locationType: 'header', location: 'Authorization' } : {}) }]
  res.writeHead(code, { 'content-type': 'application/json; charset=UTF-8' })
  res.end(JSON.stringify({ error: { errors, code, message: r.message, status: r.status } }))
}

function sendJson(res: ServerResponse, body: unknown, status = 200) {
  res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' })
  res.end(JSON.stringify(body))
}

const readBody = (req: IncomingMessage) =>
  new Promise<unknown>((resolve) => {
    let raw = ''
    req.on('data', (c) => (raw += c))
    req.on('end', () => {
      try {
        resolve(raw ? JSON.parse(raw) : undefined)
      } catch {
        resolve(Symbol.for('malformed'))
      }
    })
  })

const instant = (t: { dateTime?: string; date?: string }) => Date.parse(t.dateTime ?? `${t.date}T00:00:00Z`)
// Google's event ids: base32hex characters (a-v, 0-9), 5 to 1024 of them.
const eventId = () => Array.from(crypto.getRandomValues(new Uint8Array(20)), (b) => '0123456789abcdefghijklmnopqrstuv'[b % 32]).join('')

export async function startCalendarServer(opts: { calendarId?: string; timeZone?: string } = {}) {
  let primary = { id: opts.calendarId ?? 'primary-owner@example.com', timeZone: opts.timeZone ?? 'UTC' }
  // Every calendar that has been the primary stays addressable (one fake account per test user).
  const known = new Map<string, string>([[primary.id, primary.timeZone]])
  const calendars = new Map<string, Map<string, FakeEvent>>()
  const deleted = new Set<string>()
  const seen = new Set<string>()
  const revoked = new Set<string>()
  const requests: CalendarRequestLog[] = []
  let failing: number | null = null

  const eventsOf = (id: string) => {
    let m = calendars.get(id)
    if (!m) calendars.set(id, (m = new Map()))
    return m
  }

  function create(calendarId: string, input: Partial<FakeEvent>): FakeEvent {
    const id = input.id ?? eventId()
    const now = new Date().toISOString()
    const event: FakeEvent = {
      kind: 'calendar#event',
      etag: `"${Date.now()}"`,
      status: 'confirmed',
      htmlLink: `https://www.google.com/calendar/event?eid=${id}`,
      created: now,
      updated: now,
      iCalUID: `${id}@google.com`,
      ...input,
      id,
      start: input.start!,
      end: input.end!,
    }
    eventsOf(calendarId).set(id, event)
    return event
  }

  async function route(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://x')
    const body = await readBody(req)
    const auth = req.headers.authorization ?? ''
    const token = auth.startsWith('Bearer ') ? auth.slice(7) : null
    const path = url.pathname.startsWith(PREFIX) ? url.pathname.slice(PREFIX.length) : url.pathname
    requests.push({ method: req.method ?? '', path, query: Object.fromEntries(url.searchParams), body, token })
    if (!token || revoked.has(token)) return sendError(res, 401)
    seen.add(token)
    if (failing) return sendError(res, failing)
    if (body === Symbol.for('malformed')) return sendError(res, 400)

    const parts = path.split('/').filter(Boolean).map(decodeURIComponent)
    const method = req.method
    // calendars.get
    if (method === 'GET' && parts.length === 2 && parts[0] === 'calendars') {
      const cal = parts[1] === 'primary' ? primary : known.has(parts[1]) ? { id: parts[1], timeZone: known.get(parts[1])! } : null
      if (!cal) return sendError(res, 404)
      return sendJson(res, { kind: 'calendar#calendar', etag: '"1"', id: cal.id, summary: cal.id, timeZone: cal.timeZone })
    }
    // freebusy.query
    if (method === 'POST' && parts.length === 1 && parts[0] === 'freeBusy') {
      const q = body as { timeMin?: string; timeMax?: string; timeZone?: string; items?: Array<{ id: string }> }
      if (!q?.timeMin || !q.timeMax || !Array.isArray(q.items)) return sendError(res, 400)
      const min = Date.parse(q.timeMin)
      const max = Date.parse(q.timeMax)
      const out: Record<string, unknown> = {}
      for (const { id } of q.items) {
        if (!known.has(id)) {
          out[id] = { errors: [{ domain: 'global', reason: 'notFound' }], busy: [] }
          continue
        }
        const busy = [...eventsOf(id).values()]
          .filter((e) => e.transparency !== 'transparent' && instant(e.start) < max && instant(e.end) > min)
          .map((e) => ({ start: new Date(Math.max(instant(e.start), min)).toISOString(), end: new Date(Math.min(instant(e.end), max)).toISOString() }))
          .sort((a, b) => a.start.localeCompare(b.start))
        out[id] = { busy }
      }
      return sendJson(res, { kind: 'calendar#freeBusy', timeMin: q.timeMin, timeMax: q.timeMax, calendars: out })
    }
    if (parts[0] !== 'calendars' || parts[2] !== 'events' || !known.has(parts[1])) return sendError(res, 404)
    const calendarId = parts[1]
    const events = eventsOf(calendarId)
    // events.list
    if (method === 'GET' && parts.length === 3) {
      const q = Object.fromEntries(url.searchParams)
      const min = q.timeMin ? Date.parse(q.timeMin) : -Infinity
      const max = q.timeMax ? Date.parse(q.timeMax) : Infinity
      if (min >= max) return sendError(res, 400)
      const limit = Math.min(Number(q.maxResults ?? 250), 2500)
      const matching = [...events.values()].filter((e) => instant(e.end) > min && instant(e.start) < max).sort((a, b) => instant(a.start) - instant(b.start))
      return sendJson(res, {
        kind: 'calendar#events',
        etag: '"p1"',
        summary: calendarId,
        updated: new Date().toISOString(),
        timeZone: known.get(calendarId),
        accessRole: 'owner',
        defaultReminders: [],
        items: matching.slice(0, limit),
        ...(matching.length > limit ? { nextPageToken: 'page-2' } : {}),
      })
    }
    // events.quickAdd
    if (method === 'POST' && parts.length === 4 && parts[3] === 'quickAdd') {
      const text = url.searchParams.get('text')
      if (!text) return sendError(res, 400)
      // Google parses the text; the fake schedules every quick-add tomorrow 12:00-13:00 UTC.
      const day = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)
      return sendJson(res, create(calendarId, { summary: text, start: { dateTime: `${day}T12:00:00Z` }, end: { dateTime: `${day}T13:00:00Z` } }))
    }
    // events.insert
    if (method === 'POST' && parts.length === 3) {
      const e = body as Partial<FakeEvent> & { attendees?: Array<{ email: string }> }
      if (!e?.start || !e.end || !(instant(e.end) > instant(e.start))) return sendError(res, 400)
      const attendees = e.attendees?.map((a) => ({ email: a.email, responseStatus: 'needsAction' }))
      return sendJson(res, create(calendarId, { ...e, attendees, id: undefined }))
    }
    const id = parts[3]
    if (parts.length !== 4) return sendError(res, 404)
    const existing = events.get(id)
    if (!existing) return sendError(res, deleted.has(id) ? 410 : 404)
    // events.patch
    if (method === 'PATCH') {
      const patch = (body ?? {}) as Partial<FakeEvent>
      const next = { ...existing, ...patch, id, updated: new Date().toISOString(), etag: `"${Date.now()}"` }
      if (!(instant(next.end) > instant(next.start))) return sendError(res, 400)
      events.set(id, next)
      return sendJson(res, next)
    }
    // events.delete
    if (method === 'DELETE') {
      events.delete(id)
      deleted.add(id)
      res.writeHead(204)
      return res.end()
    }
    return sendError(res, 404)
  }

  const server = createServer((req, res) => {
    route(req, res).catch(() => sendError(res, 500))
  })
  const loopback = await listen(server)

  return {
    url: `${loopback.url}${PREFIX}`,
    requests,
    /** Requests to one method and path (`GET /calendars/x/events`), path relative to the API base. */
    calls: (method: string, path: string) => requests.filter((r) => r.method === method && r.path === path),
    /** The primary calendar the next `calendars/primary` reads describe. */
    setPrimary(p: { id: string; timeZone: string }) {
      primary = p
      known.set(p.id, p.timeZone)
    },
    primary: () => primary,
    /** Seeds an event straight into a calendar (Google's shape). */
    addEvent: (calendarId: string, e: Partial<FakeEvent> & Pick<FakeEvent, 'start' | 'end'>) => create(calendarId, e),
    events: (calendarId: string) => [...eventsOf(calendarId).values()],
    /** Every token used so far now answers 401, as an expired or revoked access token does. */
    revokeSeenTokens() {
      for (const t of seen) revoked.add(t)
    },
    /** Every call answers `status` (Google's error body) until `fail(null)`. */
    fail(status: number | null) {
      failing = status
    },
    reset() {
      failing = null
      requests.length = 0
    },
    close: loopback.close,
  }
}

export type CalendarServer = Awaited<ReturnType<typeof startCalendarServer>>
