import { eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { invites, users } from '../../../schema'
import type { WorkerdPlatform } from '../../support/workerd-platform'
import { browser } from './browser'
import { admin, signedIn, UNAUTHORIZED } from './people'

/** invites: a user invites a guest, an admin invites by email, the invite is verified, then redeemed once at sign-up. */
export function invitesJourney(p: WorkerdPlatform) {
  describe('invites', () => {
    it('creates, lists, verifies and redeems an invite once; refuses the signed out, non-admins and bad input', async () => {
      const alice = await signedIn(p, 'Alice')
      const made = await alice.post('/api/invite', { name: 'Mary Jane' })
      expect(made.status, await made.clone().text()).toBe(200)
      const { token, inviteUrl } = (await made.json()) as { token: string; inviteUrl: string }
      expect(token).toMatch(/^[0-9a-f]{64}$/)
      expect(inviteUrl).toBe(`${p.origins.app}/invite?token=${token}&name=Mary%20Jane`)

      const boss = await admin(p)
      const email = `guest-${crypto.randomUUID().slice(0, 8)}@example.com`
      const adminMade = await boss.post('/api/admin/invites', { email, audience: 'guest' })
      expect(adminMade.status, await adminMade.clone().text()).toBe(201)
      const { code } = (await adminMade.json()) as { code: string }
      const list = (await (await boss.get('/api/admin/invites')).json()) as { invites: Array<{ code: string; status: string }> }
      expect(list.invites.find((i) => i.code === code)?.status).toBe('active')

      const verify = (t: unknown) => browser(p).post('/api/invites/verify', { token: t })
      expect(await (await verify(code)).json()).toEqual({ valid: true, plan: 'solo', audience: 'guest', email })

      // Redeemed at sign-up, once: the same token again is refused (replay), and verifying it says it is used.
      const signup = await browser(p).post('/api/register', { email, password: 'correct-horse-battery', token: code })
      expect(signup.status, await signup.clone().text()).toBe(201)
      const [row] = await p.db.select().from(invites).where(eq(invites.code, code))
      const [guest] = await p.db.select().from(users).where(eq(users.email, email))
      expect(row.usedBy).toBe(guest.id)
      const again = await browser(p).post('/api/register', { email: `other-${email}`, password: 'correct-horse-battery', token: code })
      expect(again.status).toBe(410)
      const used = await verify(code)
      expect(used.status).toBe(410)
      expect(await used.json()).toEqual({ error: 'Invite already used', code: 'INVITE_USED' })

      const signedOut = await browser(p).post('/api/invite', { name: 'x' })
      expect(signedOut.status).toBe(401)
      expect(await signedOut.json()).toEqual(UNAUTHORIZED)
      expect((await alice.get('/api/admin/invites')).status).toBe(403)
      const bad = await alice.post('/api/invite', '{')
      expect(bad.status).toBe(400)
      expect(await bad.json()).toEqual({ error: 'Invalid JSON body', code: 'INVALID_JSON' })
      const unknown = await verify('0'.repeat(64))
      expect(unknown.status).toBe(404)
      expect(await unknown.json()).toEqual({ error: 'Invite not found', code: 'NOT_FOUND' })
    })
  })
}
