import { eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { users } from '../../../schema'
import { DOMAIN, HOLDER, idToken, NOBODY, WALLETS } from '../../families/farcaster/support/peers'
import type { WorkerdPlatform } from '../../support/workerd-platform'
import { addressProofMessage } from '../../../functions/farcaster/address-proof'
import type { Config } from '../../../lib/config'
import { browser } from './browser'
import type { Chain } from './chain'

/** The proof a holder signs for `token` (the family's message, for the configured Farcaster domain). */
const prove = async (fid: number, token: string) =>
  WALLETS.holder.signMessage({ message: await addressProofMessage({ FARCASTER_DOMAIN: DOMAIN } as Config, { address: HOLDER, fid, token }) })

/** farcaster: token gating read from the chain; Quick Auth sign-in with the holder's proof; the session token refreshed. */
export function farcasterJourney(p: WorkerdPlatform, chain: Chain) {
  describe('farcaster', () => {
    it('reads the token gate, signs in with an ID token and a holder proof, refreshes; refuses a forged token, a reused proof and bad input', async () => {
      const gate = await browser(p).post('/api/token-gating', { address: HOLDER })
      expect(gate.status, await gate.clone().text()).toBe(200)
      expect(await gate.json()).toMatchObject({ hasAccess: true, balance: '5', chainId: 8453, contractAddress: chain.peers.token })
      expect(await (await browser(p).get(`/api/token-gating?address=${NOBODY}`)).json()).toMatchObject({ hasAccess: false, balance: '0' })

      const fid = 4242
      const token = await idToken(chain.peers, fid)
      const b = browser(p)
      const res = await b.post('/api/auth/farcaster/verify', { token, address: HOLDER, addressSignature: await prove(fid, token) })
      expect(res.status, await res.clone().text()).toBe(200)
      const body = (await res.json()) as { ok: boolean; fid: number; user: { id: string }; sessionToken: string; tokenGate: { passed: boolean } }
      expect(body).toMatchObject({ ok: true, fid, tokenGate: { passed: true, balance: '5' } })
      const [row] = await p.db.select().from(users).where(eq(users.id, body.user.id))
      expect(row.email).toMatch(/^4242@farcaster\./)
      expect((await b.get('/api/user')).status).toBe(200)
      const refreshed = await browser(p).post('/api/auth/farcaster/refresh', { sessionToken: body.sessionToken })
      expect(refreshed.status).toBe(200)
      // EdDSA keys of the issuer too (WebCrypto's Ed25519 in workerd).
      const eddsa = await browser(p).post('/api/auth/farcaster/verify', { token: await idToken(chain.peers, 4343, {}, { kid: chain.peers.kids.eddsa }) })
      expect(eddsa.status, await eddsa.clone().text()).toBe(200)

      const forged = await browser(p).post('/api/auth/farcaster/verify', { token: await idToken(chain.peers, fid, { aud: 'evil.example' }) })
      expect(forged.status).toBe(401)
      expect(await forged.json()).toMatchObject({ code: 'INVALID_TOKEN' })
      // The holder's proof is bound to its token: used with another token (another fid) it proves nothing.
      const other = await idToken(chain.peers, 4444)
      const reused = await browser(p).post('/api/auth/farcaster/verify', { token: other, address: HOLDER, addressSignature: await prove(fid, token) })
      expect(reused.status).toBe(403)
      const tampered = await browser(p).post('/api/auth/farcaster/refresh', { sessionToken: `${body.sessionToken.split('.')[0]}x.${body.sessionToken.split('.')[1]}` })
      expect(tampered.status).toBe(401)
      const bad = await browser(p).post('/api/token-gating', { address: 'not-an-address' })
      expect(bad.status).toBe(400)
    })
  })
}
