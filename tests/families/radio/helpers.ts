import { eq } from 'drizzle-orm'
import { concatHex, createWalletClient, encodeFunctionData, erc20Abi, getAddress, http, parseUnits, type Address, type Hex, type LocalAccount } from 'viem'
import type { SiweMessage } from 'viem/siwe'
import { base } from 'viem/chains'
import type { Config } from '../../../lib/config'
import { signDelivery } from '../../../lib/queue/sign'
import type { PublishOptions } from '../../../lib/context'
import { LIVE_CACHE_KEY } from '../../../functions/radio/live'
import { chainPayments, radioGuestPasses, radioSessions } from '../../../schema'
import { anvilClients, deployContract } from '../../support/anvil'
import { compileContracts } from '../../support/contracts/compile'
import { createHarness, type Harness } from '../../support/harness'
import { startMuxServer, type MuxServer } from '../../support/mux-server'
import { startPaymentChain, type PaymentChain } from '../../support/payment-chain'
import { freshIp } from '../../support/requests'
import { walletProof, type ProofSigner } from '../../support/wallet-proof'
import { smartAccounts } from '../wallet-auth/smart-accounts'

export const QUEUE_KEY = 'radio-family-queue-key'
export const EXPIRE_URL = 'http://127.0.0.1:8787/api/radio/expire'
export const ONE_TOKEN = 10n ** 18n
export const HOLDING = 2_500_000n * ONE_TOKEN

export interface Published {
  path: string
  body: any
  opts?: PublishOptions
}

export type CreateBody = { wallet?: string; name?: string; city?: string; txHash?: string; message?: string; signature?: string; [k: string]: unknown }

/** The counterfactual account `counterfactual()` names by default. */
export const COUNTERFACTUAL_SALT = `0x${'ab'.repeat(32)}` as Hex

/**
 * The harness on a local chain 8453 (USDC-like token, the station token with 18 decimals, ERC-1271 smart
 * accounts from a CREATE2 factory) and the fake Mux API. The queue is tapped: publishes are recorded (never
 * delivered: tests deliver the expiry themselves, signed with `QUEUE_KEY`).
 */
export async function radioWorld(opts: { env?: Record<string, string | undefined> } = {}) {
  const mux = await startMuxServer()
  const chain = await startPaymentChain()
  const { GateToken } = compileContracts()
  const treasury = chain.anvil.accounts[0]
  const station = await deployContract(chain.anvil, GateToken, ['Station', 'STN', treasury.address, 100_000_000n * ONE_TOKEN])
  const accounts = await smartAccounts(chain.anvil)
  const owner = chain.anvil.accounts[2]
  const h = await createHarness({
    env: {
      ...mux.env,
      ...chain.env,
      RADIO_STATION_TOKEN: station,
      // generous for a loaded machine; the slow-Mux tests shorten it (`withConfig`)
      MUX_TIMEOUT_MS: '5000',
      QSTASH_CURRENT_SIGNING_KEY: QUEUE_KEY,
      ...opts.env,
    },
  })
  const published: Published[] = []
  let failing = 0
  h.services.queue.publish = async (path, body, o) => {
    if (failing > 0) {
      failing--
      throw new Error('queue unavailable')
    }
    published.push({ path, body, opts: o })
    return { messageId: `msg_${published.length}` }
  }
  const rpc = (method: string, params: unknown[]) =>
    fetch(chain.anvil.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) }).then(
      (r) => r.json() as Promise<{ result?: unknown; error?: unknown }>,
    )
  const { client, wallet: treasuryWallet } = anvilClients(chain.anvil, treasury)
  const usdcAbi = compileContracts().TestUsdc.abi
  // Who signs for each wallet the tests use (lower case): the funded EOAs themselves, a smart account's owner.
  const signers = new Map<string, ProofSigner>(chain.anvil.accounts.map((a) => [a.address.toLowerCase(), a]))
  const post = async (body: CreateBody | string, headers: Record<string, string>) =>
    h.web.request('/api/radio/streams', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'cf-connecting-ip': freshIp(), ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    })

  const world = {
    h,
    mux,
    chain,
    station,
    published,
    /** The next `n` queue publishes throw. */
    failPublishes(n = 1) {
      failing = n
    },
    /** A deployed smart account (contract code at its address), new each call; its owner (one for all unless told) signs its proofs (ERC-1271). */
    async smartWallet(o: { owner?: LocalAccount } = {}): Promise<Address> {
      const salt = `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex')}` as Hex
      const address = getAddress(await accounts.deploy(o.owner ?? owner, salt))
      signers.set(address.toLowerCase(), o.owner ?? owner)
      return address
    },
    /**
     * A counterfactual smart account: its address is known, no code is deployed there yet. Its proofs are ERC-6492
     * signatures (the owner's, wrapped with the factory's deploy call), which also hold once it is deployed.
     */
    async counterfactual(salt: Hex = COUNTERFACTUAL_SALT): Promise<Address> {
      const address = getAddress(await accounts.addressOf(owner, salt))
      signers.set(address.toLowerCase(), (message: string) => accounts.sign6492(owner, salt, message))
      return address
    },
    /** Deploys the counterfactual account of `salt`. */
    deployCounterfactual: (salt: Hex) => accounts.deploy(owner, salt),
    /** An ERC-6492-wrapped signature of `message` for the account of `salt`, signed by `signer` (its owner unless told). */
    sign6492: (salt: Hex, message: string, signer?: LocalAccount) => accounts.sign6492(owner, salt, message, signer),
    /**
     * The `{message, signature}` proving `wallet` for a DJ session: signed by `signer`, or by whoever signs for that
     * wallet here (its key, its owner); `over` changes the message's fields.
     */
    async proof(wallet: string, o: { signer?: ProofSigner; over?: Partial<SiweMessage> } = {}) {
      const signer = o.signer ?? signers.get(wallet.toLowerCase())
      if (!signer) throw new Error(`no signer for ${wallet}`)
      return walletProof(h.web, 'radio', wallet, signer, o.over)
    },
    /** Sends `whole` station tokens (18 decimals) to `to`. */
    async giveStation(to: Address, amount: bigint) {
      const hash = await treasuryWallet.writeContract({ address: station, abi: erc20Abi, functionName: 'transfer', args: [to, amount] })
      await client.waitForTransactionReceipt({ hash })
    },
    /**
     * A transfer of `amount` USDC (default 5) from the smart account `from` to the platform wallet (or `to`), with
     * `memo` appended to the transfer's calldata when given; the mined hash. Sent by the account itself as a direct
     * call on the token (anvil impersonates it, as an EIP-7702 account sends), or with `viaOwner` by its owner
     * through the account's `execute` (an internal call, as a smart wallet pays).
     */
    async pay(from: Address, o: { amount?: string; to?: Address; token?: Address; memo?: Hex; viaOwner?: boolean } = {}): Promise<Hex> {
      const token = o.token ?? chain.usdc
      const amount = parseUnits(o.amount ?? '5', 6)
      const minted = await treasuryWallet.writeContract({ address: token, abi: usdcAbi, functionName: 'mint', args: [from, amount] })
      await client.waitForTransactionReceipt({ hash: minted })
      const call = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [o.to ?? chain.recipient, amount] })
      const data = o.memo ? concatHex([call, o.memo]) : call
      let hash: Hex
      if (o.viaOwner) {
        const owner = signers.get(from.toLowerCase())
        if (!owner || typeof owner === 'function') throw new Error(`no owner key for ${from}`)
        const { abi } = compileContracts().TestAccount
        hash = await anvilClients(chain.anvil, owner).wallet.writeContract({ address: from, abi, functionName: 'execute', args: [token, 0n, data] })
      } else {
        await rpc('anvil_impersonateAccount', [from])
        await rpc('anvil_setBalance', [from, '0xDE0B6B3A7640000'])
        const sender = createWalletClient({ chain: base, transport: http(chain.anvil.url), account: from })
        hash = await sender.sendTransaction({ to: token, data })
      }
      const receipt = await client.waitForTransactionReceipt({ hash })
      if (receipt.status !== 'success') throw new Error(`payment reverted: ${hash}`)
      return hash
    },
    /** An unexpired guest pass for `wallet` (as an operator writes it, any case). */
    grantGuestPass: (wallet: string, expiresAt = new Date(Date.now() + 86_400_000)) =>
      h.db.insert(radioGuestPasses).values({ wallet, grantedBy: 'ops', expiresAt }).onConflictDoUpdate({ target: radioGuestPasses.wallet, set: { expiresAt } }),
    /**
     * `POST /api/radio/streams` from a fresh client address, as the DJ sends it: a body naming a wallet the tests can
     * sign for, without `message` or `signature` of its own, gets that wallet's proof (see `post` for none).
     */
    async create(body: CreateBody | string, headers: Record<string, string> = {}): Promise<Response> {
      const provable = typeof body === 'object' && typeof body.wallet === 'string' && signers.has(body.wallet.toLowerCase())
      if (!provable || 'message' in body || 'signature' in body) return post(body, headers)
      return post({ ...body, ...(await world.proof(body.wallet!)) }, headers)
    },
    /** `POST /api/radio/streams` with the body exactly as given (no proof added). */
    post: (body: CreateBody | string, headers: Record<string, string> = {}): Promise<Response> => post(body, headers),
    /** A created session, through the guest-pass path; answers the create body. */
    async started(o: { wallet?: Address; name?: string } = {}) {
      const wallet = o.wallet ?? (await world.smartWallet())
      await world.grantGuestPass(wallet)
      const res = await world.create({ wallet, name: o.name ?? 'DJ Test' })
      const body = (await res.json()) as Created
      if (res.status !== 200) throw new Error(`create failed: ${res.status} ${JSON.stringify(body)}`)
      return { ...body, walletAddress: wallet }
    },
    /** `DELETE /api/radio/streams/:id` with `token` (none when null). */
    end: async (streamId: string, token: string | null, body?: unknown, headers: Record<string, string> = {}): Promise<Response> =>
      h.web.request(`/api/radio/streams/${streamId}`, {
        method: 'DELETE',
        headers: { 'cf-connecting-ip': freshIp(), ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      }),
    /** `GET /api/radio/live`, fresh: the kv cache is cleared first unless `cached`. */
    async live(o: { cached?: boolean } = {}): Promise<Response> {
      if (!o.cached) await h.services.kv.del(LIVE_CACHE_KEY)
      return h.web.request('/api/radio/live', { headers: { 'cf-connecting-ip': freshIp() } })
    },
    /** A webhook delivery of `event`, signed now with the endpoint secret unless told otherwise. */
    async webhook(event: unknown, o: { signature?: string; timestamp?: number; body?: string } = {}): Promise<Response> {
      const body = o.body ?? JSON.stringify(event)
      return h.web.request('/api/radio/webhook', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'mux-signature': o.signature ?? mux.sign(body, o.timestamp) },
        body,
      })
    },
    /** A signed queue delivery to the expiry receiver. */
    async expire(body: unknown, key = QUEUE_KEY): Promise<Response> {
      const text = JSON.stringify(body)
      return h.web.request(EXPIRE_URL, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'upstash-signature': await signDelivery(key, EXPIRE_URL, text) },
        body: text,
      })
    },
    session: async (id: string) => (await h.db.select().from(radioSessions).where(eq(radioSessions.id, id)))[0],
    sessionsOf: (wallet: string) => h.db.select().from(radioSessions).where(eq(radioSessions.wallet, wallet.toLowerCase())),
    payment: async (txHash: string) => (await h.db.select().from(chainPayments).where(eq(chainPayments.txHash, txHash.toLowerCase())))[0],
    /** Runs `fn` with these configuration values changed (the harness's config is read per request), then restores them. */
    async withConfig<T>(patch: Partial<Config>, fn: () => Promise<T>): Promise<T> {
      const config = h.services.config as unknown as Record<string, unknown>
      const saved = Object.fromEntries(Object.keys(patch).map((k) => [k, config[k]]))
      Object.assign(config, patch)
      try {
        return await fn()
      } finally {
        Object.assign(config, saved)
      }
    },
    /** Moves a session's expiry into the past (the 2 hours went by). */
    expireNow: (id: string) => h.db.update(radioSessions).set({ expiresAt: new Date(Date.now() - 1000) }).where(eq(radioSessions.id, id)),
    async close() {
      await h.close()
      await mux.close()
      await chain.close()
    },
  }
  return world
}

export type RadioWorld = Awaited<ReturnType<typeof radioWorld>>

export interface Created {
  success: true
  stream: { id: string; name: string; wallet: string; streamKey: string; rtmpUrl: string; fullRtmpUrl: string; playbackId: string; status: 'created' }
  session: { id: string; wallet: string; maxDuration: number; remaining: number; expiresAt: string; accessToken: string }
  ffmpeg: { rtmpUrl: string; video: string; audioOnly: string; notes: string[] }
}
