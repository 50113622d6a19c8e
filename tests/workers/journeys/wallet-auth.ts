import { eq } from 'drizzle-orm'
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts'
import { describe, expect, it } from 'vitest'
import { users } from '../../../schema'
import { walletProof } from '../../support/wallet-proof'
import type { WorkerdPlatform } from '../../support/workerd-platform'
import { browser } from './browser'

/** The platform as `walletProof` calls it: nonces from the wallet-auth Worker, messages naming the dashboard's origin. */
export const platformWeb = (p: WorkerdPlatform) => ({ request: (path: string, init?: RequestInit) => p.fetch(path, init), origin: p.origins.app })

/** A plain EIP-4361 sign-in message (no statement) for `address` over a fresh nonce, signed by `signer`. */
const signIn = (p: WorkerdPlatform, address: string, signer: PrivateKeyAccount) => walletProof(platformWeb(p), 'radio', address, signer, { statement: undefined })

/** wallet-auth: nonce, SIWE message signed by an EOA, a session for the wallet's user. */
export function walletAuthJourney(p: WorkerdPlatform) {
  describe('wallet-auth', () => {
    it('signs in with a wallet (nonce, SIWE, personal_sign) to a new user with a session; refuses a replay, another key and bad input', async () => {
      const wallet: PrivateKeyAccount = privateKeyToAccount(generatePrivateKey())
      const body = { address: wallet.address, ...(await signIn(p, wallet.address, wallet)) }
      const b = browser(p)
      const res = await b.post('/api/wallet-auth', body)
      expect(res.status, await res.clone().text()).toBe(200)
      const signed = (await res.json()) as { ok: boolean; user: { id: string } }
      expect(signed).toEqual({ ok: true, user: { id: expect.any(String), name: wallet.address } })
      const session = (await (await b.get('/api/auth/session')).json()) as { user: { id: string; email: string } }
      expect(session.user.id).toBe(signed.user.id)
      const [row] = await p.db.select().from(users).where(eq(users.id, signed.user.id))
      expect(row.email).toMatch(new RegExp(`^${wallet.address.toLowerCase()}@wallet\\.`))

      // Replay: the nonce is spent.
      const replay = await browser(p).post('/api/wallet-auth', body)
      expect(replay.status).toBe(401)
      expect(await replay.json()).toMatchObject({ code: 'NONCE_INVALID' })
      expect(replay.headers.get('set-cookie')).toBeNull()
      // Another key signing a message naming this wallet.
      const attacker = privateKeyToAccount(generatePrivateKey())
      const refused = await browser(p).post('/api/wallet-auth', { address: wallet.address, ...(await signIn(p, wallet.address, attacker)) })
      expect(refused.status).toBe(401)
      expect(await refused.json()).toMatchObject({ code: 'SIGNATURE_INVALID' })
      const bad = await browser(p).post('/api/wallet-auth', { address: wallet.address, message: 'hello', signature: '0x00' })
      expect(bad.status).toBe(400)
    })
  })
}
