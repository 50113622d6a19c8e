import { eq } from 'drizzle-orm'
import { beforeAll, describe, expect, it } from 'vitest'
import type { Config } from '../../../lib/config'
import { seal } from '../../../lib/secret-box'
import { calendarConnections } from '../../../schema'
import { CALENDAR_SCOPES } from '../../../functions/calendar/google'
import { createHarness, useFixture, useHarness } from '../../support/harness'
import {
  authorize,
  calendarOf,
  callback,
  connect,
  connectionRow,
  connectUrl,
  DASHBOARD,
  expireToken,
  getCalendar,
  grantScopes,
  landing,
  location,
  postCalendar,
  refreshRequests,
  startStack,
} from './helpers'

const s = useFixture(() => startStack())
beforeAll(async () => {
  await connect(s, s.h.users.alice)
})

const json = (res: Response) => res.json() as Promise<any>
const UNAUTHORIZED = { error: 'Unauthorized', code: 'UNAUTHORIZED' }
const NOT_CONNECTED = { error: 'Calendar not connected', code: 'NOT_CONNECTED' }
const UNAVAILABLE = { error: 'Calendar provider unavailable', code: 'PROVIDER_UNAVAILABLE' }
const CREATE = { action: 'create-event', title: 'Sync', start: '2026-03-05T10:00:00Z', end: '2026-03-05T11:00:00Z' }

describe('calendar: without a session', () => {
  it('status is false (not 401); auth goes to the login page; everything else is 401', async () => {
    const { h } = s
    const status = await getCalendar(h, undefined, '?action=status')
    expect(status.status).toBe(200)
    expect(await json(status)).toEqual({ connected: false })

    const auth = await getCalendar(h, undefined, '?action=auth')
    expect(auth.status).toBe(302)
    expect(auth.headers.get('location')).toBe(`${DASHBOARD}/login?callbackUrl=/dashboard/calendar`)

    for (const q of ['', '?action=list', '?action=availability']) {
      const res = await getCalendar(h, undefined, q)
      expect(res.status, q).toBe(401)
      expect(await json(res)).toEqual(UNAUTHORIZED)
    }
    for (const body of [{ action: 'connect' }, CREATE, { action: 'delete-event', eventId: 'x' }]) {
      const res = await postCalendar(h, undefined, body)
      expect(res.status).toBe(401)
      expect(await json(res)).toEqual(UNAUTHORIZED)
    }
  })
})

describe('calendar: signed in but not connected', () => {
  it('list, availability and every event action → 401 Calendar not connected; connect still works', async () => {
    const { h, cal } = s
    const { bob } = h.users
    const calls = cal.requests.length
    for (const q of ['?action=list', '?action=availability']) {
      const res = await getCalendar(h, bob, q)
      expect(res.status, q).toBe(401)
      expect(await json(res)).toEqual(NOT_CONNECTED)
    }
    for (const body of [CREATE, { action: 'update-event', eventId: 'e1', title: 'x' }, { action: 'delete-event', eventId: 'e1' }, { action: 'quick-add', text: 'x' }]) {
      const res = await postCalendar(h, bob, body)
      expect(res.status, body.action).toBe(401)
      expect(await json(res)).toEqual(NOT_CONNECTED)
    }
    expect(cal.requests.length).toBe(calls)
    expect(await json(await getCalendar(h, bob, '?action=status'))).toEqual({ connected: false })
    expect((await postCalendar(h, bob, { action: 'connect' })).status).toBe(200)
  })
})

describe('calendar: invalid requests', () => {
  it('an unknown action → 400 INVALID_ACTION (GET and POST); a missing POST action too', async () => {
    const { h } = s
    const { alice } = h.users
    const get = await getCalendar(h, alice, '?action=delete')
    expect(get.status).toBe(400)
    expect(await json(get)).toEqual({ error: 'Invalid action', code: 'INVALID_ACTION' })
    for (const body of [{ action: 'drop-calendar' }, {}, { action: 7 }]) {
      const res = await postCalendar(h, alice, body)
      expect(res.status).toBe(400)
      expect(await json(res)).toEqual({ error: 'Invalid action', code: 'INVALID_ACTION' })
    }
  })

  it('missing, malformed or oversized fields → 400 VALIDATION; nothing reaches Google', async () => {
    const { h, cal } = s
    const { alice } = h.users
    const calls = cal.requests.length
    const cases: Array<[unknown, string]> = [
      [{ action: 'create-event', start: CREATE.start, end: CREATE.end }, 'title is required'],
      [{ ...CREATE, title: '   ' }, 'title is required'],
      [{ ...CREATE, start: 'tomorrow' }, 'start must be an ISO 8601 date-time with a time zone'],
      [{ ...CREATE, start: '2026-03-05T10:00:00' }, 'start must be an ISO 8601 date-time with a time zone'],
      [{ ...CREATE, end: undefined }, 'end is required'],
      [{ ...CREATE, end: '2026-03-05T09:00:00Z' }, 'end must be after start'],
      [{ ...CREATE, title: 'x'.repeat(1025) }, 'title must be at most 1024 characters'],
      [{ ...CREATE, attendees: ['not-an-email'] }, 'attendees must be email addresses'],
      [{ ...CREATE, attendees: Array.from({ length: 51 }, (_, i) => `a${i}@example.com`) }, ''],
      [{ action: 'update-event', title: 'x' }, 'eventId is required'],
      [{ action: 'update-event', eventId: 'e1', start: '2026-03-05T10:00:00Z', end: '2026-03-05T10:00:00Z' }, 'end must be after start'],
      [{ action: 'delete-event' }, 'eventId is required'],
      [{ action: 'quick-add', text: '' }, 'text is required'],
      [{ action: 'quick-add', text: 'x'.repeat(1025) }, 'text must be at most 1024 characters'],
    ]
    for (const [body, message] of cases) {
      const res = await postCalendar(h, alice, body)
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400)
      const out = await json(res)
      expect(out.code).toBe('VALIDATION')
      if (message) expect(out.error).toBe(message)
    }
    for (const q of ['?action=list&start=yesterday', '?action=list&end=2026-03-01', '?action=availability&date=2026-02-30', '?action=availability&date=03/02/2026']) {
      const res = await getCalendar(h, alice, q)
      expect(res.status, q).toBe(400)
      expect((await json(res)).code).toBe('VALIDATION')
    }
    const backwards = await getCalendar(h, alice, '?action=list&start=2026-03-08T00:00:00Z&end=2026-03-01T00:00:00Z')
    expect(backwards.status).toBe(400)
    expect(await json(backwards)).toMatchObject({ error: 'end must be after start', code: 'VALIDATION' })
    expect(cal.requests.length).toBe(calls)
  })

  it('update or delete an unknown or deleted event → 404 Event not found', async () => {
    const { h } = s
    const { alice } = h.users
    for (const body of [{ action: 'update-event', eventId: 'nosuchevent1', title: 'x' }, { action: 'delete-event', eventId: 'nosuchevent1' }]) {
      const res = await postCalendar(h, alice, body)
      expect(res.status).toBe(404)
      expect(await json(res)).toEqual({ error: 'Event not found', code: 'NOT_FOUND' })
    }
    const created = await json(await postCalendar(h, alice, CREATE))
    expect((await postCalendar(h, alice, { action: 'delete-event', eventId: created.eventId })).status).toBe(200)
    // Google answers 410 Gone for an event already deleted.
    const again = await postCalendar(h, alice, { action: 'delete-event', eventId: created.eventId })
    expect(again.status).toBe(404)
    expect(s.cal.requests.at(-1)!.method).toBe('DELETE')
  })
})

describe('calendar: Google failing', () => {
  it('Google answering 5xx or 403 → 503 PROVIDER_UNAVAILABLE; nothing is created (refused and never answering: dependencies.test.ts)', async () => {
    const { h, cal } = s
    const { alice } = h.users
    const events = cal.events(calendarOf(alice).id).length
    for (const fail of [() => cal.fail(503), () => cal.fail(500), () => cal.fail(403)]) {
      fail()
      for (const res of [
        await getCalendar(h, alice, '?action=list'),
        await getCalendar(h, alice, '?action=availability'),
        await postCalendar(h, alice, CREATE),
        await postCalendar(h, alice, { action: 'quick-add', text: 'Lunch' }),
      ]) {
        expect(res.status).toBe(503)
        expect(await json(res)).toEqual(UNAVAILABLE)
      }
      cal.reset()
    }
    expect(cal.events(calendarOf(alice).id).length).toBe(events)
    expect((await getCalendar(h, alice, '?action=list')).status).toBe(200)
  })

  it('the token endpoint failing at refresh → 503, the connection unchanged', async () => {
    const { h, oidc } = s
    const { alice } = h.users
    await expireToken(h, alice.id)
    const before = await connectionRow(h, alice.id)
    oidc.failTokens({ grantType: 'refresh_token', status: 500, body: { error: 'server_error' } })
    try {
      const res = await getCalendar(h, alice, '?action=list')
      expect(res.status).toBe(503)
      expect(await json(res)).toEqual(UNAVAILABLE)
      expect(await connectionRow(h, alice.id)).toEqual(before)
    } finally {
      oidc.failTokens(null)
    }
    expect((await getCalendar(h, alice, '?action=list')).status).toBe(200)
  })

  it('a revoked grant (invalid_grant at refresh) marks the calendar disconnected: 401 not connected, status false', async () => {
    const { h, oidc, cal } = s
    const carol = await h.seedUser('Carol', `carol-${crypto.randomUUID().slice(0, 6)}@example.com`)
    await connect(s, carol)
    await expireToken(h, carol.id)
    oidc.failTokens({ grantType: 'refresh_token', status: 400, body: { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' } })
    try {
      const refreshes = refreshRequests(oidc)
      const res = await getCalendar(h, carol, '?action=list')
      expect(res.status).toBe(401)
      expect(await json(res)).toEqual(NOT_CONNECTED)
      expect(refreshRequests(oidc)).toBe(refreshes + 1)
      expect((await connectionRow(h, carol.id)).connected).toBe(false)
      expect(await json(await getCalendar(h, carol, '?action=status'))).toEqual({ connected: false })
      // Later calls answer at once, without Google.
      const calls = cal.requests.length
      const again = await postCalendar(h, carol, CREATE)
      expect(again.status).toBe(401)
      expect(await json(again)).toEqual(NOT_CONNECTED)
      expect(refreshRequests(oidc)).toBe(refreshes + 1)
      expect(cal.requests.length).toBe(calls)
    } finally {
      oidc.failTokens(null)
    }
    // Connecting again revives it.
    await connect(s, carol)
    expect(await json(await getCalendar(h, carol, '?action=status'))).toEqual({ connected: true })
    expect((await getCalendar(h, carol, '?action=list')).status).toBe(200)
  })

  it('tokens this server can no longer open (its keys changed) read as not connected: status false, calls 401, never 500', async () => {
    const { h, cal } = s
    const dave = await h.seedUser('Dave', `dave-${crypto.randomUUID().slice(0, 6)}@example.com`)
    await connect(s, dave)
    const row = await connectionRow(h, dave.id)
    const other = { ...h.services.config, sessionSecret: 'a-lost-secret' } as Config
    const access = await seal(other, 'ya29.lost', dave.id, 'calendar:access')
    for (const set of [{ keyId: access.keyId, accessToken: access.sealed }, { keyId: 'retired-key', accessToken: row.accessToken }]) {
      await h.db.update(calendarConnections).set(set).where(eq(calendarConnections.userId, dave.id))
      expect(await json(await getCalendar(h, dave, '?action=status'))).toEqual({ connected: false })
      const calls = cal.requests.length
      const list = await getCalendar(h, dave, '?action=list')
      expect(list.status).toBe(401)
      expect(await json(list)).toEqual(NOT_CONNECTED)
      const create = await postCalendar(h, dave, CREATE)
      expect(create.status).toBe(401)
      expect(cal.requests.length).toBe(calls)
    }
    // Connecting again stores tokens that open.
    await connect(s, dave)
    expect(await json(await getCalendar(h, dave, '?action=status'))).toEqual({ connected: true })
    expect((await getCalendar(h, dave, '?action=list')).status).toBe(200)
  })
})

describe('calendar callback: every redirect', () => {
  it('the provider error is passed on (sanitised), then no_code, missing_state, invalid_state', async () => {
    const { h } = s
    const { alice } = h.users
    expect(landing(await callback(h, { error: 'access_denied', state: 'x' }, alice.cookie))).toBe('error:access_denied')
    expect(landing(await callback(h, { error: '<script>alert(1)</script>' }))).toBe('error:unknown')
    expect(landing(await callback(h, { error: 'x'.repeat(65) }))).toBe('error:unknown')
    expect(landing(await callback(h, { state: 'abc' }, alice.cookie))).toBe('error:no_code')
    expect(landing(await callback(h, { code: 'abc' }, alice.cookie))).toBe('error:missing_state')
    expect(landing(await callback(h, { code: 'abc', state: 'not-a-state' }, alice.cookie))).toBe('error:invalid_state')
    // A malformed query (over the bounds) still lands on the dashboard.
    expect(landing(await callback(h, { code: 'c'.repeat(3000), state: 's' }))).toBe('error:unknown')
  })

  it('token_failed when the code is refused; unknown when the calendar cannot be read', async () => {
    const { h, oidc, cal } = s
    const { bob } = h.users
    cal.setPrimary(calendarOf(bob))
    oidc.failTokens({ grantType: 'authorization_code', status: 400, body: { error: 'invalid_grant' } })
    try {
      const back = await authorize(await connectUrl(h, bob))
      expect(landing(await callback(h, back.searchParams, bob.cookie))).toBe('error:token_failed')
    } finally {
      oidc.failTokens(null)
    }
    cal.fail(500)
    try {
      const back = await authorize(await connectUrl(h, bob))
      expect(landing(await callback(h, back.searchParams, bob.cookie))).toBe('error:unknown')
    } finally {
      cal.reset()
    }
    expect(await connectionRow(h, bob.id)).toBeUndefined()
  })

  it('access_denied when the calendar scopes were not all granted (granular consent)', async () => {
    const { h, oidc, cal } = s
    const { bob } = h.users
    cal.setPrimary(calendarOf(bob))
    grantScopes(oidc, 'https://www.googleapis.com/auth/calendar.readonly')
    try {
      const back = await authorize(await connectUrl(h, bob))
      expect(landing(await callback(h, back.searchParams, bob.cookie))).toBe('error:access_denied')
    } finally {
      grantScopes(oidc, CALENDAR_SCOPES.join(' '))
    }
    expect(await connectionRow(h, bob.id)).toBeUndefined()
    // The full calendar scope covers both.
    grantScopes(oidc, 'https://www.googleapis.com/auth/calendar')
    try {
      const back = await authorize(await connectUrl(h, bob))
      expect(landing(await callback(h, back.searchParams, bob.cookie))).toBe('connected')
    } finally {
      grantScopes(oidc, CALENDAR_SCOPES.join(' '))
    }
  })
})

describe('calendar: Google not configured', () => {
  const bare = useHarness()

  it('JSON routes → 503 NOT_CONFIGURED; the callback → error=unknown; status → false', async () => {
    const { alice } = bare.users
    const expected = { error: 'Calendar not configured', code: 'NOT_CONFIGURED' }
    for (const res of [
      await postCalendar(bare, alice, { action: 'connect' }),
      await getCalendar(bare, alice, '?action=auth'),
      await getCalendar(bare, alice, '?action=list'),
      await postCalendar(bare, alice, CREATE),
    ]) {
      expect(res.status).toBe(503)
      expect(await json(res)).toEqual(expected)
    }
    expect(landing(await callback(bare, { code: 'c', state: 's' }))).toBe('error:unknown')
    expect(await json(await getCalendar(bare, alice, '?action=status'))).toEqual({ connected: false })
  })

  it('without SESSION_SECRET the calendar is not configured either', async () => {
    const h = await createHarness({ env: { GOOGLE_CLIENT_ID: 'id', GOOGLE_CLIENT_SECRET: 'secret', SESSION_SECRET: undefined } })
    try {
      const res = await postCalendar(h, h.users.alice, { action: 'connect' })
      expect(res.status).toBe(503)
      expect((await json(res)).code).toBe('NOT_CONFIGURED')
      expect(location(await callback(h, { code: 'c', state: 's' })).searchParams.get('error')).toBe('unknown')
    } finally {
      await h.close()
    }
  })
})
