import { eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { accounts, securityEvents, sessions, users } from '../../../schema'
import type { OidcServer } from '../../support/oidc-server'
import type { WorkerdPlatform } from '../../support/workerd-platform'
import { consent, GOOGLE, location, pathOf } from './google'
import { delivered } from './queue'

const RISC = 'https://schemas.openid.net/secevent/risc/event-type/'
const cookieOf = (res: Response, name: string) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .find((c) => c.startsWith(`${name}=`) && c.length > name.length + 1)

/** oauth: Google sign-in (start, consent, callback) and a RISC event acted on through the queue. */
export function oauthJourney(p: WorkerdPlatform, oidc: OidcServer) {
  describe('oauth', () => {
    it('signs in with Google, creating the user with a session; a replayed callback is refused', async () => {
      const email = `grace-${crypto.randomUUID().slice(0, 6)}@example.com`
      oidc.setIdentity({ sub: `sub-${email}`, email, email_verified: true, name: 'Grace Hopper' })
      const start = await p.fetch('/api/auth/google', { redirect: 'manual' })
      expect(start.status).toBe(302)
      const stateCookie = cookieOf(start, 'google-oauth-state')!
      expect(stateCookie).toBeTruthy()
      const back = await consent(location(start))
      const cb = await p.fetch(pathOf(back), { headers: { cookie: stateCookie }, redirect: 'manual' })
      expect(cb.status).toBe(302)
      expect(location(cb).pathname).toBe('/dashboard')
      const session = cookieOf(cb, 'service-session')!
      const me = (await (await p.fetch('/api/auth/session', { headers: { cookie: session } })).json()) as { user: { email: string } }
      expect(me.user.email).toBe(email)
      const [user] = await p.db.select().from(users).where(eq(users.email, email))
      expect(user).toMatchObject({ name: 'Grace Hopper', passwordHash: null })

      // Replay: the same callback (code, state and cookie) again is refused, with no second exchange.
      const exchanges = oidc.tokenRequests.length
      const again = await p.fetch(pathOf(back), { headers: { cookie: stateCookie }, redirect: 'manual' })
      expect(location(again).pathname).toBe('/login')
      expect(location(again).searchParams.get('error')).toBe('InvalidState')
      expect(oidc.tokenRequests.length).toBe(exchanges)
      // Another browser (no state cookie) cannot finish a flow either.
      const start2 = await p.fetch('/api/auth/google', { redirect: 'manual' })
      const stranger = await p.fetch(pathOf(await consent(location(start2))), { redirect: 'manual' })
      expect(location(stranger).searchParams.get('error')).toBe('InvalidState')
    })

    it('takes a RISC event (202), and the queued delivery back to the Worker revokes the sessions; bad tokens are 400', async () => {
      const [user] = await p.db.insert(users).values({ email: `risc-${crypto.randomUUID().slice(0, 6)}@example.com`, name: 'R' }).returning()
      const sub = `risc-sub-${user.id}`
      await p.db.insert(accounts).values({ userId: user.id, provider: 'google', providerAccountId: sub, email: user.email })
      await p.db.insert(sessions).values({ tokenHash: crypto.randomUUID(), userId: user.id, expiresAt: new Date(Date.now() + 60_000) })
      const jti = `jti-${crypto.randomUUID()}`
      const token = await oidc.sign({ aud: GOOGLE.clientId, jti, events: { [`${RISC}sessions-revoked`]: { subject: { subject_type: 'iss-sub', iss: `${oidc.url}/`, sub } } } })
      const post = (body: string) => p.fetch('/api/security/risc', { method: 'POST', headers: { 'content-type': 'application/secevent+jwt' }, body })
      const res = await post(token)
      expect(res.status, await res.clone().text()).toBe(202)
      const [msg] = await delivered(p, '/api/queue/risc')
      expect(msg.state).toBe('delivered')
      const [row] = await p.db.select().from(securityEvents).where(eq(securityEvents.jti, jti))
      expect(row).toMatchObject({ userId: user.id, outcome: 'sessions-revoked: 1 session(s) deleted' })
      expect(await p.db.select().from(sessions).where(eq(sessions.userId, user.id))).toEqual([])

      // The same event again (replay): acknowledged, no second effect.
      expect((await post(token)).status).toBe(202)
      expect(await p.db.select().from(securityEvents).where(eq(securityEvents.jti, jti))).toHaveLength(1)
      const bad = await post('not-a-token')
      expect(bad.status).toBe(400)
      expect(await bad.json()).toEqual({ error: 'Invalid security event token', code: 'INVALID_SECURITY_EVENT' })
      // The queue's receiver takes only signed deliveries.
      expect((await p.fetch('/api/queue/risc', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(401)
    })
  })
}
