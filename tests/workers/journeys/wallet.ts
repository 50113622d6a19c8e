import { eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { userWallets } from '../../../schema'
import type { CdpServer } from '../../support/cdp-server'
import type { StripeServer } from '../../support/stripe-server'
import type { WorkerdPlatform } from '../../support/workerd-platform'
import { browser } from './browser'
import type { Chain } from './chain'
import { signedIn, UNAUTHORIZED } from './people'

/** wallet: balances read from the chain, a managed wallet made through CDP, its address and a card top-up. */
export function walletJourney(p: WorkerdPlatform, chain: Chain, cdp: CdpServer, stripe: StripeServer) {
  describe('wallet', () => {
    it('reads balances, creates a managed wallet on CDP, shows it, starts a top-up; refuses a second wallet, another user, the signed out and bad input', async () => {
      const balances = await browser(p).get(`/api/wallet?address=${chain.holder.address}`)
      expect(balances.status, await balances.clone().text()).toBe(200)
      const funded = (await balances.json()) as { primaryToken: { balance: string }; assets: Array<{ symbol: string }> }
      expect(funded.primaryToken).toMatchObject({ balance: '1000', balanceRaw: '1000000000' })
      expect(funded.assets.map((a) => a.symbol)).toEqual(['ETH', 'USDC'])

      const cleo = await signedIn(p, 'Cleo')
      // With CDP configured, the wallet without an address describes the agentic wallet.
      expect(await (await cleo.get('/api/wallet')).json()).toMatchObject({ agenticWallet: { status: 'configured' } })
      const created = await cleo.post('/api/wallet/create', { email: cleo.user.email })
      expect(created.status, await created.clone().text()).toBe(201)
      const { walletAddress, walletId } = (await created.json()) as { walletAddress: string; walletId: string }
      expect(cdp.accounts.find((a) => a.name === walletId)?.address).toBe(walletAddress)
      const [row] = await p.db.select().from(userWallets).where(eq(userWallets.userId, cleo.user.id))
      expect(row.address.toLowerCase()).toBe(walletAddress.toLowerCase())
      expect(await (await cleo.get('/api/wallet/address')).json()).toEqual({ authenticated: true, address: walletAddress, network: 'base', type: 'cdp', source: 'managed' })
      expect(await (await cleo.post('/api/wallet', { action: 'get_seed' })).json()).toMatchObject({ hasWallet: true, address: walletAddress, custody: 'cdp', exportable: false })
      const topUp = await cleo.get(`/api/wallet/top-up?amount=2500&address=${walletAddress.toLowerCase()}`)
      expect(topUp.status, await topUp.clone().text()).toBe(200)
      expect(stripe.sessions.at(-1)!.metadata).toMatchObject({ kind: 'wallet-top-up', userId: cleo.user.id, amountCents: '2500' })

      // A second wallet: refused, CDP not asked to make another.
      const accounts = cdp.accounts.length
      const again = await cleo.post('/api/wallet', { action: 'create' })
      expect(again.status).toBe(400)
      expect(await again.json()).toMatchObject({ code: 'WALLET_EXISTS' })
      expect(cdp.accounts.length).toBe(accounts)

      const bob = await signedIn(p, 'Bob')
      const theirs = await bob.get(`/api/wallet/top-up?address=${walletAddress}`)
      expect(theirs.status).toBe(403)
      expect(await theirs.json()).toMatchObject({ code: 'FORBIDDEN' })
      const signedOut = await browser(p).get('/api/wallet/address')
      expect(signedOut.status).toBe(401)
      expect(await signedOut.json()).toEqual(UNAUTHORIZED)
      const bad = await browser(p).get('/api/wallet?address=not-an-address')
      expect(bad.status).toBe(400)
    })
  })
}
