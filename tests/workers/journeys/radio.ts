import { eq } from 'drizzle-orm'
import type { Hex, LocalAccount } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { describe, expect, it } from 'vitest'
import { radioGuestPasses, radioSessions } from '../../../schema'
import type { MuxServer } from '../../support/mux-server'
import { walletProof } from '../../support/wallet-proof'
import type { WorkerdPlatform } from '../../support/workerd-platform'
import { smartAccounts } from '../../families/wallet-auth/smart-accounts'
import { browser } from './browser'
import type { Chain } from './chain'
import { fire } from './queue'
import { platformWeb } from './wallet-auth'

type Created = { stream: { id: string }; session: { id: string; accessToken: string } }

/** radio: a DJ's smart wallet with a guest pass, proven by its owner (ERC-1271 over the chain), gets a Mux stream; Mux's webhook makes it live; the DJ ends it. */
export function radioJourney(p: WorkerdPlatform, mux: MuxServer, chain: Chain) {
  describe('radio', () => {
    it('starts a stream, goes live by the signed webhook, lists it, ends it; refuses a replayed proof and webhook, another DJ, no token and bad input', async () => {
      // Only deployed smart wallets stream: two accounts, each owned by a key of its own.
      const accounts = await smartAccounts(chain.peers.anvil)
      const smartWallet = async () => {
        const owner = privateKeyToAccount(generatePrivateKey())
        const address = await accounts.deploy(owner, generatePrivateKey() as Hex)
        await p.db.insert(radioGuestPasses).values({ wallet: address.toLowerCase(), grantedBy: 'ops', expiresAt: new Date(Date.now() + 86_400_000) })
        return { address, owner }
      }
      const dj = await smartWallet()
      const other = await smartWallet()
      const start = async (wallet: { address: string; owner: LocalAccount }, name: string) => {
        const body = { wallet: wallet.address, name, ...(await walletProof(platformWeb(p), 'radio', wallet.address, wallet.owner)) }
        return { body, res: await browser(p).post('/api/radio/streams', body) }
      }
      const first = await start(dj, 'Night Shift')
      expect(first.res.status, await first.res.clone().text()).toBe(200)
      const created = (await first.res.json()) as Created
      expect(mux.streams.get(created.stream.id)).toMatchObject({ status: 'idle', passthrough: created.session.id })
      // Its end in two hours is scheduled on QStash.
      expect(p.qstash.published.filter((m) => m.destination.endsWith('/api/radio/expire') && m.body.includes(created.session.id))).toHaveLength(1)

      mux.connect(created.stream.id)
      const event = mux.event('video.live_stream.active', mux.streams.get(created.stream.id)!)
      const raw = JSON.stringify(event)
      const hook = () => p.fetch('/api/radio/webhook', { method: 'POST', headers: { 'content-type': 'application/json', 'mux-signature': mux.sign(raw) }, body: raw })
      expect(await (await hook()).json()).toMatchObject({ outcome: 'applied' })
      const [row] = await p.db.select().from(radioSessions).where(eq(radioSessions.id, created.session.id))
      expect(row.status).toBe('live')
      expect(await (await hook()).json()).toMatchObject({ outcome: 'duplicate' })
      const live = await browser(p).get('/api/radio/live')
      expect(live.status, await live.clone().text()).toBe(200)

      const second = await start(other, 'Day Shift')
      expect(second.res.status).toBe(200)
      const theirs = (await second.res.json()) as Created
      const end = (id: string, token?: string, body: unknown = {}) =>
        p.fetch(`/api/radio/streams/${id}`, { method: 'DELETE', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) })
      const wrong = await end(theirs.stream.id, created.session.accessToken)
      expect(wrong.status).toBe(403)
      expect(await wrong.json()).toEqual({ error: 'This token is for another stream', code: 'FORBIDDEN' })
      expect((await end(created.stream.id)).status).toBe(401)
      const ended = await end(created.stream.id, created.session.accessToken)
      expect(ended.status, await ended.clone().text()).toBe(200)
      expect(await ended.json()).toMatchObject({ success: true, alreadyEnded: false, session: { status: 'ended' } })
      expect(mux.streams.has(created.stream.id)).toBe(false)

      // The other DJ's two hours pass: the expiry sweep (a QStash cron) ends the session, the stream disabled.
      await p.db.update(radioSessions).set({ expiresAt: new Date(Date.now() - 120_000) }).where(eq(radioSessions.id, theirs.session.id))
      expect((await fire(p, 'radio-expiry-sweep')).state).toBe('delivered')
      const [expired] = await p.db.select().from(radioSessions).where(eq(radioSessions.id, theirs.session.id))
      expect(expired.status).toBe('auto-ended')
      expect(mux.streams.get(theirs.stream.id)?.status).toBe('disabled')

      // The proof was single use.
      const replay = await browser(p).post('/api/radio/streams', first.body)
      expect(replay.status).toBe(401)
      expect(await replay.json()).toEqual({ error: 'Invalid or expired nonce', code: 'NONCE_INVALID' })
      const bad = await browser(p).post('/api/radio/streams', { wallet: 'nope' })
      expect(bad.status).toBe(400)
    })
  })
}
