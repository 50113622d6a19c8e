import { describe, expect, it } from 'vitest'
import type { WorkerdPlatform } from '../../support/workerd-platform'
import { SoftAuthenticator } from '../../families/passkeys/authenticator'
import { browser } from './browser'
import { sendAs, signedIn, UNAUTHORIZED } from './people'

type Options = { options: { challenge: string }; challenge: string }

/** passkeys: enrol a passkey (software authenticator), sign in with it, list and remove it. */
export function passkeysJourney(p: WorkerdPlatform) {
  describe('passkeys', () => {
    it('enrols a passkey, signs in with it, lists and removes it; refuses a replayed assertion, another user, the signed out and bad input', async () => {
      const rp = { origin: p.origins.app, rpId: new URL(p.origins.app).hostname }
      const alice = await signedIn(p, 'Alice')
      const key = new SoftAuthenticator(rp)
      const reg = (await (await alice.post('/api/passkey/register/options')).json()) as Options
      const enrolled = await alice.post('/api/passkey/register/verify', { credential: key.register({ challenge: reg.options.challenge }), challenge: reg.challenge, label: 'Laptop' })
      expect(enrolled.status, await enrolled.clone().text()).toBe(200)
      expect(await enrolled.json()).toEqual({ ok: true })

      const visitor = browser(p)
      const auth = (await (await visitor.post('/api/passkey/auth/options', { identifier: alice.user.email })).json()) as Options
      const credential = key.assert({ challenge: auth.options.challenge })
      const signIn = await visitor.post('/api/passkey/auth/verify', { credential, challenge: auth.challenge })
      expect(signIn.status, await signIn.clone().text()).toBe(200)
      expect(await signIn.json()).toEqual({ ok: true, user: { id: alice.user.id, name: 'Alice' } })
      expect(((await (await visitor.get('/api/auth/session')).json()) as { user: { id: string } }).user.id).toBe(alice.user.id)
      // Replay: the same assertion over the same challenge signs nobody in.
      const replay = await browser(p).post('/api/passkey/auth/verify', { credential, challenge: auth.challenge })
      expect(replay.status).toBe(400)
      expect(await replay.json()).toMatchObject({ code: 'CHALLENGE_INVALID' })
      expect(replay.headers.get('set-cookie')).toBeNull()

      const list = (await (await alice.get('/api/passkeys')).json()) as { passkeys: Array<{ id: string; label: string; lastUsedAt: string | null }> }
      expect(list.passkeys).toMatchObject([{ id: key.id, label: 'Laptop', lastUsedAt: expect.any(String) }])
      const bob = await signedIn(p, 'Bob')
      expect(await (await bob.get('/api/passkeys')).json()).toEqual({ passkeys: [] })
      const theirs = await sendAs(p, bob, 'DELETE', `/api/passkeys/${key.id}`)
      expect(theirs.status).toBe(404)
      const removed = await sendAs(p, alice, 'DELETE', `/api/passkeys/${key.id}`)
      expect(removed.status, await removed.clone().text()).toBe(200)
      expect(await removed.json()).toEqual({ success: true, id: key.id })

      const signedOut = await browser(p).post('/api/passkey/register/options')
      expect(signedOut.status).toBe(401)
      expect(await signedOut.json()).toEqual(UNAUTHORIZED)
      const bad = await browser(p).post('/api/passkey/auth/options', { identifier: '' })
      expect(bad.status).toBe(400)
      expect(await bad.json()).toMatchObject({ code: 'VALIDATION' })
    })
  })
}
