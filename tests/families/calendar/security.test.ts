import { eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { pkceChallenge, pkceVerifier, signState, STATE_TTL_MS } from '../../../functions/calendar/state'
import { withUser } from '../../../lib/db/rls'
import { calendarConnections } from '../../../schema'
import { BROWSER, useFixture } from '../../support/harness'
import { expectOwnRowsOnly } from '../../support/rls'
import {
  authorize,
  calendarOf,
  callback,
  CALLBACK,
  CLIENT_ID,
  connect,
  connectionRow,
  connectUrl,
  getCalendar,
  landing,
  SESSION_SECRET,
  startStack,
} from './helpers'

const s = useFixture(() => startStack())

const json = (res: Response) => res.json() as Promise<any>
const exchanges = () => s.oidc.tokenRequests.filter((r) => r.grant_type === 'authorization_code').length

/** A consent at the provider for a state we made ourselves (the challenge derived as the service derives it). */
async function consentFor(state: string, nonce: string) {
  const url = new URL(`${s.oidc.url}/authorize`)
  const challenge = await pkceChallenge(await pkceVerifier(SESSION_SECRET, nonce))
  for (const [k, v] of Object.entries({ client_id: CLIENT_ID, redirect_uri: CALLBACK, response_type: 'code', state, code_challenge: challenge, code_challenge_method: 'S256' })) {
    url.searchParams.set(k, v)
  }
  return authorize(url)
}

describe('calendar OAuth state', () => {
  it('a forged state (wrong key, edited user, edited signature) → invalid_state, the code never exchanged', async () => {
    const { h } = s
    const { alice, bob } = h.users
    const nonce = 'a'.repeat(32)
    const real = await signState(SESSION_SECRET, { userId: alice.id, nonce, issuedAt: Date.now() })
    const otherKey = await signState('not-the-secret', { userId: alice.id, nonce, issuedAt: Date.now() })
    const [header, payload, sig] = real.split('.')
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString())
    const edited = `${header}.${Buffer.from(JSON.stringify({ ...claims, sub: bob.id })).toString('base64url')}.${sig}`
    const flipped = `${header}.${payload}.${sig.startsWith('A') ? 'B' : 'A'}${sig.slice(1)}`
    const before = exchanges()
    for (const state of [otherKey, edited, flipped, `${header}.${payload}.`, 'x.y']) {
      expect(landing(await callback(h, { code: 'some-code', state }, alice.cookie))).toBe('error:invalid_state')
    }
    expect(exchanges()).toBe(before)
    expect(await connectionRow(h, bob.id)).toBeUndefined()
  })

  it('expired: a state over 10 minutes old → invalid_state; one just under is accepted', async () => {
    const { h } = s
    const { alice } = h.users
    s.cal.setPrimary(calendarOf(alice))
    const old = { userId: alice.id, nonce: 'b'.repeat(32), issuedAt: Date.now() - STATE_TTL_MS - 1000 }
    const oldState = await signState(SESSION_SECRET, old)
    const back = await consentFor(oldState, old.nonce)
    const before = exchanges()
    expect(landing(await callback(h, back.searchParams, alice.cookie))).toBe('error:invalid_state')
    expect(exchanges()).toBe(before)

    const future = { userId: alice.id, nonce: 'c'.repeat(32), issuedAt: Date.now() + 5 * 60_000 }
    const futureBack = await consentFor(await signState(SESSION_SECRET, future), future.nonce)
    expect(landing(await callback(h, futureBack.searchParams, alice.cookie))).toBe('error:invalid_state')

    const recent = { userId: alice.id, nonce: 'd'.repeat(32), issuedAt: Date.now() - STATE_TTL_MS + 30_000 }
    const recentBack = await consentFor(await signState(SESSION_SECRET, recent), recent.nonce)
    expect(landing(await callback(h, recentBack.searchParams, alice.cookie))).toBe('connected')
  })

  it('replayed: a callback URL works once; again → invalid_state', async () => {
    const { h } = s
    const { alice } = h.users
    s.cal.setPrimary(calendarOf(alice))
    const back = await authorize(await connectUrl(h, alice))
    expect(landing(await callback(h, back.searchParams, alice.cookie))).toBe('connected')
    const before = exchanges()
    expect(landing(await callback(h, back.searchParams, alice.cookie))).toBe('error:invalid_state')
    // A new code with the spent state is refused as well.
    const again = new URLSearchParams(back.searchParams)
    again.set('code', 'another-code')
    expect(landing(await callback(h, again, alice.cookie))).toBe('error:invalid_state')
    expect(exchanges()).toBe(before)
  })

  it("another user's state: bob's browser cannot finish alice's connect, nor burn it; alice can", async () => {
    const { h } = s
    const { alice, bob } = h.users
    await h.db.delete(calendarConnections).where(eq(calendarConnections.userId, alice.id))
    s.cal.setPrimary(calendarOf(alice))
    const back = await authorize(await connectUrl(h, alice))
    const before = exchanges()
    expect(landing(await callback(h, back.searchParams, bob.cookie))).toBe('error:invalid_state')
    expect(exchanges()).toBe(before)
    expect(await connectionRow(h, bob.id)).toBeUndefined()
    expect(await connectionRow(h, alice.id)).toBeUndefined()
    expect(landing(await callback(h, back.searchParams, alice.cookie))).toBe('connected')
    expect(await connectionRow(h, alice.id)).toMatchObject({ calendarId: calendarOf(alice).id, connected: true })
  })

  it('without a session cookie → invalid_state (connect CSRF on a signed-out victim), the state not used up', async () => {
    const { h } = s
    const carol = await h.seedUser('Carol', `carol-${crypto.randomUUID().slice(0, 6)}@example.com`)
    s.cal.setPrimary(calendarOf(carol))
    const back = await authorize(await connectUrl(h, carol))
    const before = exchanges()
    expect(landing(await callback(h, back.searchParams))).toBe('error:invalid_state')
    expect(exchanges()).toBe(before)
    expect(await connectionRow(h, carol.id)).toBeUndefined()
    // Not burned: carol's own browser can still finish it.
    expect(landing(await callback(h, back.searchParams, carol.cookie))).toBe('connected')
    expect(await connectionRow(h, carol.id)).toMatchObject({ calendarId: calendarOf(carol).id })
  })
})

describe('calendar isolation', () => {
  it("bob never sees alice's connection: his status, his calls and his rows are his own", async () => {
    const { h, cal } = s
    const { alice, bob } = h.users
    await connect(s, alice)
    await h.db.delete(calendarConnections).where(eq(calendarConnections.userId, bob.id))
    // Bob, not connected, is told so even though alice is.
    expect(await json(await getCalendar(h, bob, '?action=status'))).toEqual({ connected: false })
    expect((await getCalendar(h, bob, '?action=list')).status).toBe(401)
    // Row isolation: as bob, alice's row is not there, whatever the query says.
    const seen = await withUser(h.services.db, bob.id, (tx) => tx.select().from(calendarConnections))
    expect(seen).toEqual([])
    const hijack = await withUser(h.services.db, bob.id, (tx) =>
      tx.update(calendarConnections).set({ connected: false }).where(eq(calendarConnections.userId, alice.id)).returning(),
    )
    expect(hijack).toEqual([])
    expect((await connectionRow(h, alice.id)).connected).toBe(true)

    await connect(s, bob)
    await expectOwnRowsOnly(h.services.db, bob.id, calendarConnections)
    await expectOwnRowsOnly(h.services.db, alice.id, calendarConnections)
    // Each user's calls go to their own calendar with their own token.
    await getCalendar(h, bob, '?action=list')
    const bobCall = cal.requests.at(-1)!
    await getCalendar(h, alice, '?action=list')
    const aliceCall = cal.requests.at(-1)!
    expect(bobCall.path).toBe(`/calendars/${encodeURIComponent(calendarOf(bob).id)}/events`)
    expect(aliceCall.path).toBe(`/calendars/${encodeURIComponent(calendarOf(alice).id)}/events`)
    expect(bobCall.token).not.toBe(aliceCall.token)
  })

  it('a sealed token copied onto another user\'s row does not open there', async () => {
    const { h } = s
    const { alice, bob } = h.users
    const a = await connectionRow(h, alice.id)
    await h.db.update(calendarConnections).set({ accessToken: a.accessToken, keyId: a.keyId }).where(eq(calendarConnections.userId, bob.id))
    // Bob's row now holds alice's sealed token: it fails to open as his, so he is simply not connected.
    const res = await getCalendar(h, bob, '?action=list')
    expect(res.status).toBe(401)
    expect((await json(res)).code).toBe('NOT_CONNECTED')
  })
})

describe('calendar: requests from elsewhere', () => {
  it('POST from a foreign Origin → 403, nothing issued', async () => {
    const res = await s.h.web.request('/api/calendar', {
      method: 'POST',
      headers: { ...BROWSER, origin: 'https://evil.example', cookie: s.h.users.alice.cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ action: 'connect' }),
    })
    expect(res.status).toBe(403)
    expect((await json(res)).code).toBe('ORIGIN_NOT_ALLOWED')
  })

  it('no response carries a token', async () => {
    const { h, cal } = s
    const { alice } = h.users
    const bodies = [
      await (await getCalendar(h, alice, '?action=list')).text(),
      await (await getCalendar(h, alice, '?action=availability')).text(),
      await (await getCalendar(h, alice, '?action=status')).text(),
    ]
    const token = cal.requests.at(-2)!.token!
    for (const b of bodies) expect(b).not.toContain(token)
  })
})
