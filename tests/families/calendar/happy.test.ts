import { base64url } from 'jose'
import { describe, expect, it } from 'vitest'
import { open } from '../../../lib/secret-box'
import {
  CALLBACK,
  CLIENT_ID,
  CLIENT_SECRET,
  calendarOf,
  connect,
  connectionRow,
  connectUrl,
  DASHBOARD,
  expireToken,
  getCalendar,
  location,
  postCalendar,
  refreshRequests,
  startStack,
} from './helpers'
import { useFixture } from '../../support/harness'

const s = useFixture(() => startStack())

const SCOPES = 'https://www.googleapis.com/auth/calendar.events https://www.googleapis.com/auth/calendar.readonly'
const json = (res: Response) => res.json() as Promise<any>

describe('calendar: connecting', () => {
  it('connect → consent → callback → status true, the primary calendar stored', async () => {
    const { h, oidc, cal } = s
    const { alice } = h.users
    expect(await json(await getCalendar(h, alice, '?action=status'))).toEqual({ connected: false })

    const url = await connectUrl(h, alice)
    expect(`${url.origin}${url.pathname}`).toBe(`${oidc.url}/authorize`)
    const p = Object.fromEntries(url.searchParams)
    expect(p).toMatchObject({
      client_id: CLIENT_ID,
      redirect_uri: CALLBACK,
      response_type: 'code',
      scope: SCOPES,
      access_type: 'offline',
      prompt: 'consent',
      code_challenge_method: 'S256',
    })
    // A compact HS256 JWT (lib/auth/signed-token.ts).
    expect(p.state).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/)
    expect(p.code_challenge).toMatch(/^[A-Za-z0-9_-]{43}$/)

    const exchanges = oidc.tokenRequests.length
    const res = await connect(s, alice)
    expect(res.headers.get('location')).toBe(`${DASHBOARD}/dashboard/calendar?connected=true`)
    expect(res.headers.get('cache-control')).toBe('no-store')
    // The code was exchanged once, with the client secret, the same redirect URI and a PKCE verifier matching the challenge sent.
    expect(oidc.tokenRequests.length).toBe(exchanges + 1)
    const sent = oidc.tokenRequests.at(-1)!
    expect(sent).toMatchObject({ grant_type: 'authorization_code', client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uri: CALLBACK })
    expect(sent.code_verifier).toMatch(/^[A-Za-z0-9_-]{43}$/)

    expect(await json(await getCalendar(h, alice, '?action=status'))).toEqual({ connected: true })
    const row = await connectionRow(h, alice.id)
    expect(row).toMatchObject({ calendarId: calendarOf(alice).id, timezone: 'America/New_York', connected: true })
    expect(row.refreshToken).toBeTruthy()
    expect(row.tokenExpiresAt!.getTime()).toBeGreaterThan(Date.now())
    expect(cal.calls('GET', '/calendars/primary').length).toBeGreaterThan(0)
  })

  it('PKCE: the verifier sent at the exchange is the one the consent URL committed to', async () => {
    const { h, oidc } = s
    const { bob } = h.users
    s.cal.setPrimary(calendarOf(bob))
    const url = await connectUrl(h, bob)
    const back = await fetch(url, { redirect: 'manual' })
    await s.h.web.request(`/api/calendar/callback?${location(back).searchParams}`, { headers: { cookie: bob.cookie } })
    const verifier = oidc.tokenRequests.at(-1)!.code_verifier as string
    const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))
    expect(base64url.encode(new Uint8Array(digest))).toBe(url.searchParams.get('code_challenge'))
    expect(await json(await getCalendar(h, bob, '?action=status'))).toEqual({ connected: true })
  })

  it('GET ?action=auth redirects a signed-in user to the consent screen', async () => {
    const res = await getCalendar(s.h, s.h.users.alice, '?action=auth')
    expect(res.status).toBe(302)
    const url = location(res)
    expect(`${url.origin}${url.pathname}`).toBe(`${s.oidc.url}/authorize`)
    expect(url.searchParams.get('scope')).toBe(SCOPES)
    expect(url.searchParams.get('state')).toBeTruthy()
  })

  it('GET without an action describes the actions', async () => {
    const res = await getCalendar(s.h, s.h.users.alice, '')
    expect(res.status).toBe(200)
    expect(await json(res)).toEqual({ message: expect.any(String), actions: ['auth', 'list', 'availability'] })
  })
})

describe('calendar: events', () => {
  it('list: defaults to now .. now + 30 days, single events by start time, one page of 250; shaped as the spec', async () => {
    const { h, cal } = s
    const { alice } = h.users
    const id = calendarOf(alice).id
    const soon = Date.now() + 2 * 3600_000
    cal.addEvent(id, { summary: 'Standup', location: 'Room 1', start: { dateTime: new Date(soon).toISOString() }, end: { dateTime: new Date(soon + 1800_000).toISOString() } })
    cal.addEvent(id, { summary: 'Offsite', start: { date: new Date(soon + 86_400_000).toISOString().slice(0, 10) }, end: { date: new Date(soon + 2 * 86_400_000).toISOString().slice(0, 10) } })
    cal.addEvent(id, { summary: 'Far away', start: { dateTime: new Date(Date.now() + 40 * 86_400_000).toISOString() }, end: { dateTime: new Date(Date.now() + 40 * 86_400_000 + 3600_000).toISOString() } })

    const before = Date.now()
    const res = await getCalendar(h, alice, '?action=list')
    expect(res.status).toBe(200)
    const body = await json(res)
    expect(body.timezone).toBe('America/New_York')
    expect(body.events.map((e: { summary: string }) => e.summary)).toEqual(['Standup', 'Offsite'])
    expect(body.events[0]).toEqual({ id: expect.any(String), summary: 'Standup', start: { dateTime: expect.any(String) }, end: { dateTime: expect.any(String) }, location: 'Room 1' })
    expect(body.events[1].start).toEqual({ date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/) })

    const q = cal.calls('GET', `/calendars/${encodeURIComponent(id)}/events`).at(-1)!.query
    expect(q).toMatchObject({ singleEvents: 'true', orderBy: 'startTime', maxResults: '250' })
    const min = Date.parse(q.timeMin)
    expect(min).toBeGreaterThanOrEqual(before - 1000)
    expect(min).toBeLessThanOrEqual(Date.now())
    expect(Date.parse(q.timeMax) - min).toBe(30 * 86_400_000)
  })

  it('list: start and end are sent as given (as UTC instants)', async () => {
    const { h, cal } = s
    const res = await getCalendar(h, h.users.alice, `?action=list&start=${encodeURIComponent('2026-03-01T00:00:00-05:00')}&end=2026-03-08T00:00:00Z`)
    expect(res.status).toBe(200)
    const q = cal.requests.at(-1)!.query
    expect(q.timeMin).toBe('2026-03-01T05:00:00.000Z')
    expect(q.timeMax).toBe('2026-03-08T00:00:00.000Z')
  })

  it('create-event → success, eventId, event; attendees reach Google', async () => {
    const { h, cal } = s
    const { alice } = h.users
    const res = await postCalendar(h, alice, {
      action: 'create-event',
      title: 'Design review',
      start: '2026-03-02T10:00:00-05:00',
      end: '2026-03-02T11:00:00-05:00',
      description: 'Bring sketches',
      location: 'Room 2',
      attendees: ['ada@example.com', 'grace@example.com'],
    })
    expect(res.status).toBe(200)
    const body = await json(res)
    expect(body).toEqual({
      success: true,
      eventId: body.event.id,
      event: { id: body.eventId, summary: 'Design review', start: { dateTime: '2026-03-02T10:00:00-05:00' }, end: { dateTime: '2026-03-02T11:00:00-05:00' }, location: 'Room 2' },
    })
    const stored = cal.events(calendarOf(alice).id).find((e) => e.id === body.eventId)!
    expect(stored).toMatchObject({ summary: 'Design review', description: 'Bring sketches' })
    expect(stored.attendees?.map((a) => a.email)).toEqual(['ada@example.com', 'grace@example.com'])
  })

  it('update-event changes only the fields given; delete-event removes it', async () => {
    const { h, cal } = s
    const { alice } = h.users
    const created = await json(await postCalendar(h, alice, { action: 'create-event', title: 'Lunch', start: '2026-03-03T12:00:00Z', end: '2026-03-03T13:00:00Z', location: 'Cafe' }))
    const res = await postCalendar(h, alice, { action: 'update-event', eventId: created.eventId, title: 'Long lunch', end: '2026-03-03T14:00:00Z' })
    expect(res.status).toBe(200)
    expect(await json(res)).toEqual({
      success: true,
      event: { id: created.eventId, summary: 'Long lunch', start: { dateTime: '2026-03-03T12:00:00Z' }, end: { dateTime: '2026-03-03T14:00:00Z' }, location: 'Cafe' },
    })
    const patch = cal.calls('PATCH', `/calendars/${encodeURIComponent(calendarOf(alice).id)}/events/${created.eventId}`).at(-1)!
    expect(patch.body).toEqual({ summary: 'Long lunch', end: { dateTime: '2026-03-03T14:00:00Z' } })

    const del = await postCalendar(h, alice, { action: 'delete-event', eventId: created.eventId })
    expect(del.status).toBe(200)
    expect(await json(del)).toEqual({ success: true })
    expect(cal.events(calendarOf(alice).id).some((e) => e.id === created.eventId)).toBe(false)
  })

  it('quick-add hands the text to Google → success, eventId', async () => {
    const { h, cal } = s
    const res = await postCalendar(h, h.users.alice, { action: 'quick-add', text: 'Coffee with Ada tomorrow at noon' })
    expect(res.status).toBe(200)
    const body = await json(res)
    expect(body).toEqual({ success: true, eventId: expect.any(String) })
    expect(cal.requests.at(-1)!.query).toEqual({ text: 'Coffee with Ada tomorrow at noon' })
    expect(cal.events(calendarOf(h.users.alice).id).find((e) => e.id === body.eventId)?.summary).toBe('Coffee with Ada tomorrow at noon')
  })
})

describe('calendar: availability', () => {
  it('one-hour slots 09:00-23:00 in the calendar zone (New York, EST), busy where an event overlaps', async () => {
    const { h, cal } = s
    const { alice } = h.users
    // 09:30-10:30 EST and 15:00-15:15 EST on 2026-03-02.
    cal.addEvent(calendarOf(alice).id, { summary: 'A', start: { dateTime: '2026-03-02T14:30:00Z' }, end: { dateTime: '2026-03-02T15:30:00Z' } })
    cal.addEvent(calendarOf(alice).id, { summary: 'B', start: { dateTime: '2026-03-02T20:00:00Z' }, end: { dateTime: '2026-03-02T20:15:00Z' } })
    const res = await getCalendar(h, alice, '?action=availability&date=2026-03-02')
    expect(res.status).toBe(200)
    const body = await json(res)
    expect(body.date).toBe('2026-03-02')
    expect(body.busySlots).toEqual([
      { start: '2026-03-02T09:00:00-05:00', end: '2026-03-02T10:00:00-05:00' },
      { start: '2026-03-02T10:00:00-05:00', end: '2026-03-02T11:00:00-05:00' },
      { start: '2026-03-02T15:00:00-05:00', end: '2026-03-02T16:00:00-05:00' },
    ])
    expect(body.availableSlots).toHaveLength(11)
    expect(body.availableSlots[0]).toEqual({ start: '2026-03-02T11:00:00-05:00', end: '2026-03-02T12:00:00-05:00' })
    expect(body.availableSlots.at(-1)).toEqual({ start: '2026-03-02T22:00:00-05:00', end: '2026-03-02T23:00:00-05:00' })
    // freebusy.query covered exactly 09:00-23:00 New York time, for the stored calendar.
    const q = cal.calls('POST', '/freeBusy').at(-1)!.body
    expect(q).toEqual({ timeMin: '2026-03-02T14:00:00.000Z', timeMax: '2026-03-03T04:00:00.000Z', timeZone: 'America/New_York', items: [{ id: calendarOf(alice).id }] })
  })

  it('follows daylight saving: on 2026-03-08 New York is at -04:00', async () => {
    const body = await json(await getCalendar(s.h, s.h.users.alice, '?action=availability&date=2026-03-08'))
    expect(body.busySlots).toEqual([])
    expect(body.availableSlots).toHaveLength(14)
    expect(body.availableSlots[0]).toEqual({ start: '2026-03-08T09:00:00-04:00', end: '2026-03-08T10:00:00-04:00' })
    expect(s.cal.calls('POST', '/freeBusy').at(-1)!.body).toMatchObject({ timeMin: '2026-03-08T13:00:00.000Z', timeMax: '2026-03-09T03:00:00.000Z' })
  })

  it("defaults to today in the calendar's zone", async () => {
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/New_York', year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date())
    const body = await json(await getCalendar(s.h, s.h.users.alice, '?action=availability'))
    expect(body.date).toBe(today)
    expect(body.availableSlots.length + body.busySlots.length).toBe(14)
    expect(body.availableSlots.concat(body.busySlots).every((slot: { start: string }) => slot.start.startsWith(today))).toBe(true)
  })
})

describe('calendar: tokens', () => {
  it('an expired access token is refreshed once, stored sealed, and used', async () => {
    const { h, oidc, cal } = s
    const { alice } = h.users
    const before = await connectionRow(h, alice.id)
    await expireToken(h, alice.id)
    const refreshes = refreshRequests(oidc)
    const res = await getCalendar(h, alice, '?action=list')
    expect(res.status).toBe(200)
    expect(refreshRequests(oidc)).toBe(refreshes + 1)
    const refresh = oidc.tokenRequests.filter((r) => r.grant_type === 'refresh_token').at(-1)!
    expect(refresh).toMatchObject({ client_id: CLIENT_ID, client_secret: CLIENT_SECRET })
    expect((refresh as unknown as Record<string, unknown>).refresh_token).toBe(await open(h.services.config, { keyId: before.keyId, sealed: before.refreshToken! }, alice.id, 'calendar:refresh'))

    const after = await connectionRow(h, alice.id)
    expect(after.accessToken).not.toBe(before.accessToken)
    expect(after.tokenExpiresAt!.getTime()).toBeGreaterThan(Date.now())
    const used = cal.requests.at(-1)!.token
    expect(used).toBe(await open(h.services.config, { keyId: after.keyId, sealed: after.accessToken }, alice.id, 'calendar:access'))
    // Fresh now: the next call refreshes nothing.
    expect((await getCalendar(h, alice, '?action=list')).status).toBe(200)
    expect(refreshRequests(oidc)).toBe(refreshes + 1)
  })

  it('a 401 from Google refreshes once and retries', async () => {
    const { h, oidc, cal } = s
    const { alice } = h.users
    const before = await connectionRow(h, alice.id)
    cal.revokeSeenTokens()
    const refreshes = refreshRequests(oidc)
    const calls = cal.requests.length
    const res = await getCalendar(h, alice, '?action=availability&date=2026-03-04')
    expect(res.status).toBe(200)
    expect(refreshRequests(oidc)).toBe(refreshes + 1)
    // Refused, then accepted with the new token.
    expect(cal.requests.slice(calls).map((r) => r.path)).toEqual(['/freeBusy', '/freeBusy'])
    expect((await connectionRow(h, alice.id)).accessToken).not.toBe(before.accessToken)
  })

  it('tokens are sealed at rest: the row holds no plaintext token', async () => {
    const { h, cal } = s
    const { alice } = h.users
    await getCalendar(h, alice, '?action=list')
    const token = cal.requests.at(-1)!.token!
    const row = await connectionRow(h, alice.id)
    const text = JSON.stringify(row)
    expect(text).not.toContain(token)
    expect(text).not.toContain(token.split('.')[1])
    const refresh = await open(h.services.config, { keyId: row.keyId, sealed: row.refreshToken! }, alice.id, 'calendar:refresh')
    expect(text).not.toContain(refresh)
    // Bound to its owner and purpose: the access token does not open as bob's, nor as the refresh token.
    await expect(open(h.services.config, { keyId: row.keyId, sealed: row.accessToken }, h.users.bob.id, 'calendar:access')).rejects.toThrow()
    await expect(open(h.services.config, { keyId: row.keyId, sealed: row.accessToken }, alice.id, 'calendar:refresh')).rejects.toThrow()
  })
})
