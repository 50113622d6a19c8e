import { eq } from 'drizzle-orm'
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts'
import { createSiweMessage } from 'viem/siwe'
import { describe, expect, it } from 'vitest'
import { users } from '../../../schema'
import type { WorkerdPlatform } from '../../support/workerd-platform'
import { browser } from './browser'

/** A nonce from the wallet-auth Worker. */
export async function nonce(p: WorkerdPlatform) {
  const res = await browser(p).get('/api/auth/nonce')
  expect(res.status).toBe(200)
  return ((await res.json()) as { nonce: string }).nonce
}

/** An EIP-4361 message for the platform's own origin on chain 8453 over a fresh nonce (`statement` for a purpose). */
export async function siwe(p: WorkerdPlatform, address: string, statement?: string) {
  const origin = new URL(p.origins.app)
  return createSiweMessage({ domain: origin.host, uri: origin.origin, version: '1', chainId: 8453, address: address as `0x${string}`, nonce: await nonce(p), issuedAt: new Date(), statement })
}

/** wallet-auth: nonce, SIWE message signed by an EOA, a session for the wallet's user. */
export function walletAuthJourney(p: WorkerdPlatform) {
  describe('wallet-auth', () => {
    it('signs in with a wallet (nonce, SIWE, personal_sign) to a new user with a session; refuses a replay, another key and bad input', async () => {
      const wallet: PrivateKeyAccount = privateKeyToAccount(generatePrivateKey())
      const message = await siwe(p, wallet.address)
      const body = { address: wallet.address, message, signature: await wallet.signMessage({ message }) }
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
      const forged = await siwe(p, wallet.address)
      const refused = await browser(p).post('/api/wallet-auth', { address: wallet.address, message: forged, signature: await attacker.signMessage({ message: forged }) })
      expect(refused.status).toBe(401)
      expect(await refused.json()).toMatchObject({ code: 'SIGNATURE_INVALID' })
      const bad = await browser(p).post('/api/wallet-auth', { address: wallet.address, message: 'hello', signature: '0x00' })
      expect(bad.status).toBe(400)
    })
  })
}
