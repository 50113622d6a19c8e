import { eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { calendarConnections } from '../../../schema'
import type { CalendarServer } from '../../support/calendar-server'
import type { OidcServer } from '../../support/oidc-server'
import type { WorkerdPlatform } from '../../support/workerd-platform'
import { browser } from './browser'
import { consent, location, pathOf } from './google'
import { type Person, signedIn, UNAUTHORIZED } from './people'

/** Where a callback sent the browser: `connected` or `error:<value>`. */
function landing(res: Response) {
  expect(res.status).toBe(302)
  const url = location(res)
  expect(url.pathname).toBe('/dashboard/calendar')
  return url.searchParams.get('connected') === 'true' ? 'connected' : `error:${url.searchParams.get('error')}`
}

/** calendar: connect Google Calendar (consent, callback), list and create events, availability. */
export function calendarJourney(p: WorkerdPlatform, oidc: OidcServer, cal: CalendarServer) {
  const connectUrl = async (who: Person) => {
    const res = await who.post('/api/calendar', { action: 'connect' })
    expect(res.status, await res.clone().text()).toBe(200)
    return new URL(((await res.json()) as { authUrl: string }).authUrl)
  }
  describe('calendar', () => {
    it('connects, creates an event, lists it and reads availability; refuses a replayed callback, another user, the signed out and bad input', async () => {
      const alice = await signedIn(p, 'Alice')
      const calendarId = `cal-${alice.user.email}`
      cal.setPrimary({ id: calendarId, timeZone: 'America/New_York' })
      expect(await (await alice.get('/api/calendar?action=status')).json()).toEqual({ connected: false })
      const back = await consent(await connectUrl(alice))
      const cb = await alice.get(pathOf(back))
      expect(landing(cb)).toBe('connected')
      expect(await (await alice.get('/api/calendar?action=status')).json()).toEqual({ connected: true })
      const [row] = await p.db.select().from(calendarConnections).where(eq(calendarConnections.userId, alice.user.id))
      expect(row).toMatchObject({ calendarId, timezone: 'America/New_York', connected: true })

      const created = await alice.post('/api/calendar', { action: 'create-event', title: 'Design review', start: '2026-03-02T10:00:00-05:00', end: '2026-03-02T11:00:00-05:00' })
      expect(created.status, await created.clone().text()).toBe(200)
      const { eventId } = (await created.json()) as { eventId: string }
      expect(cal.events(calendarId).map((e) => e.id)).toContain(eventId)
      const list = await alice.get('/api/calendar?action=list&start=2026-03-02T00:00:00Z&end=2026-03-03T00:00:00Z')
      expect(list.status).toBe(200)
      expect(JSON.stringify(await list.json())).toContain(eventId)
      // The access token expires: the next call refreshes it once at Google and goes on.
      const refreshes = () => oidc.tokenRequests.filter((r) => r.grant_type === 'refresh_token').length
      const before = refreshes()
      await p.db.update(calendarConnections).set({ tokenExpiresAt: new Date(Date.now() - 1000) }).where(eq(calendarConnections.userId, alice.user.id))
      const slots = await alice.get('/api/calendar?action=availability&date=2026-03-02')
      expect(slots.status, await slots.clone().text()).toBe(200)
      // The slots are in the calendar's zone (Intl's time zones, as workerd has them).
      expect(refreshes()).toBe(before + 1)
      expect(((await slots.json()) as { busySlots: unknown[] }).busySlots).toEqual([{ start: '2026-03-02T10:00:00-05:00', end: '2026-03-02T11:00:00-05:00' }])

      // Replay: the callback URL works once.
      expect(landing(await alice.get(pathOf(back)))).toBe('error:invalid_state')
      // Bob never sees alice's connection, and cannot touch her event.
      const bob = await signedIn(p, 'Bob')
      expect(await (await bob.get('/api/calendar?action=status')).json()).toEqual({ connected: false })
      const theirs = await bob.post('/api/calendar', { action: 'delete-event', eventId })
      expect(theirs.status).toBe(401)
      expect(cal.events(calendarId).map((e) => e.id)).toContain(eventId)

      const signedOut = await browser(p).post('/api/calendar', { action: 'connect' })
      expect(signedOut.status).toBe(401)
      expect(await signedOut.json()).toEqual(UNAUTHORIZED)
      const bad = await alice.post('/api/calendar', { action: 'explode' })
      expect(bad.status).toBe(400)
      expect(await bad.json()).toMatchObject({ code: 'INVALID_ACTION' })
    })
  })
}
