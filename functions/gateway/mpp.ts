import { eq } from 'drizzle-orm'
import { base64url } from 'jose'
import { concatHex, getAddress, isAddress, isAddressEqual, keccak256, parseUnits, type Address, type Hex } from 'viem'
import { z } from 'zod'
import { chainPayments } from '../../schema'
import { assertBaseChain, BASE_CHAIN_ID, baseClient } from '../../lib/chain'
import type { Config } from '../../lib/config'
import type { Services } from '../../lib/context'
import { hmacSha256Hex, randomHex, timingSafeEqual } from '../../lib/crypto'
import { ApiError } from '../../lib/http/errors'
import type { Kv } from '../../lib/kv/types'
import { errorFields, log } from '../../lib/log'
import { TransferError, verifyTransfer } from '../../lib/payments/transfer'
import type { Plugin } from './plugins'

/**
 * MPP, the "Payment" HTTP authentication scheme (IETF draft-ryan-httpauth-payment), as the gateway speaks it: a
 * 402 challenge names a price in the payment token, the recipient and a single-use nonce, under an `id` that is an
 * HMAC of the challenge's fields. The caller picks a secret of its own (32 random bytes), pays with one direct
 * ERC-20 `transfer` on chain 8453 whose calldata ends with the memo `keccak256(id ‖ secret)`, then repeats the call
 * with `Authorization: Payment <credential>`, the credential being mppx's encoding: base64url(JSON `{challenge:
 * {id, request, expires, ...}, payload: {type: 'hash', hash: <tx hash>, secret}}`).
 *
 * Why the secret: the transaction is public once broadcast, so the hash and the memo prove only that someone
 * paid. The memo commits to a secret only the payer's credential reveals; whoever copies the hash from the chain
 * cannot open the commitment, so a front-runner presenting the payer's transaction is refused. The secret is the
 * payer's, never the server's: a challenge is issued to anyone who asks, so nothing the server hands out can be
 * what proves the payer. The other payments to the same recipient (payment-session deposits, radio fees) refuse a
 * transfer that carries a memo (`memo_bound`), so a payment made for a call cannot be spent on something else first.
 */
export const CHALLENGE_TTL_MS = 5 * 60 * 1000
/** A challenge put back after its call failed upstream stays usable at least this long, so it can be retried. */
export const RETRY_GRACE_MS = 60 * 1000
/** The method and intent names of mppx's challenge encoding: an EVM charge proved by a transaction hash. */
export const MPP_METHOD = 'evm'
export const MPP_INTENT = 'charge'
/** How the memo is made, as the challenge's `request.methodDetails.memo` says it. */
export const MEMO_RULE = 'keccak256(id || secret)'
const MAX_CREDENTIAL_CHARS = 8192

export const nonceKey = (nonce: string) => `gateway:mpp:${nonce}`

/**
 * What a nonce was issued for (kv, single use; the terms are kept for inspection: a credential's terms are those
 * of its HMAC-bound `request`, checked against the plugin's price). Even with SESSION_SECRET leaked, a forged
 * challenge pays nothing without a live nonce, and never less than the price.
 */
export interface StoredChallenge {
  pluginId: string
  /** Base units of the token. */
  amount: string
  token: string
  recipient: string
  /** Epoch ms. */
  expiresAt: number
}

/** The price of a call in the payment token's base units (the token is a USD stablecoin: 1 token = 1 USD). */
export const priceUnits = (config: Pick<Config, 'PAYMENT_TOKEN_DECIMALS'>, price: string) => parseUnits(price, config.PAYMENT_TOKEN_DECIMALS)

/**
 * The recipient and token MPP payments go to and the secret challenge ids are made with, or null when MPP is not
 * configured (no valid `PAYMENT_RECIPIENT`, or no `SESSION_SECRET` to bind challenges with).
 */
export function paymentTerms(config: Config): { recipient: Address; token: Address; secret: string } | null {
  const recipient = config.PAYMENT_RECIPIENT
  const secret = config.sessionSecret
  if (!recipient || !secret || !isAddress(recipient) || !isAddress(config.PAYMENT_TOKEN_ADDRESS)) return null
  return { recipient: getAddress(recipient), token: getAddress(config.PAYMENT_TOKEN_ADDRESS), secret }
}

/** The memo a payment for challenge `id` carries: `keccak256(id ‖ secret)`, both 32 bytes, `secret` the payer's. */
export const paymentMemo = (id: string, secret: Hex): Hex => keccak256(concatHex([`0x${id}`, secret]))

/**
 * The challenge `id`: HMAC-SHA256 (hex) under SESSION_SECRET of the fields a credential echoes. `request` holds the
 * amount, token, recipient, chain, plugin and nonce, `expires` the expiry: none can be changed without the id
 * failing. The realm (the host) is left out: a credential stays good through another name of the same server.
 */
const challengeId = (secret: string, f: { method: string; intent: string; request: string; expires: string }) =>
  hmacSha256Hex(secret, ['gateway-mpp-challenge', f.method, f.intent, f.request, f.expires].join('|'))

/** `request` as the challenge encodes it (base64url JSON): what the payment must be, and for what. */
const RequestSchema = z.object({
  amount: z.string().regex(/^\d{1,30}$/),
  currency: z.string(),
  recipient: z.string(),
  methodDetails: z.object({ chainId: z.number(), plugin: z.string(), nonce: z.string().regex(/^[0-9a-f]{64}$/) }),
})

/** The `mpp` part of a 402 body (spec fields; plus the challenge `id` and `request` a credential echoes, the token and chain). */
export interface MppOffer {
  scheme: 'Payment'
  amount: string
  currency: string
  recipient: string | null
  description: string
  nonce: string | null
  expiresAt: string | null
  id: string | null
  request: string | null
  token: string | null
  chainId: number
}

const authParam = (name: string, value: string) => `${name}="${value.replace(/[\\"]/g, '\\$&')}"`

/**
 * A fresh challenge for one call of `plugin`: its nonce (32 random bytes, hex) stored for 5 minutes, the body's
 * `mpp` part and the `WWW-Authenticate` header. The header carries the spec's `amount`, `currency` and
 * `recipient`, the `nonce`, and mppx's `id` (the HMAC), `realm`, `method`, `intent`, `request` and `expires`, so
 * an mppx client can parse it. Without MPP configured: the offer says so and there is no header.
 */
export async function issueChallenge(services: Pick<Services, 'config' | 'kv'>, plugin: Plugin, realm: string): Promise<{ offer: MppOffer; header?: string }> {
  const { config, kv } = services
  const terms = paymentTerms(config)
  const base = { scheme: 'Payment' as const, amount: plugin.price, currency: config.PAYMENT_CURRENCY, chainId: BASE_CHAIN_ID }
  if (!terms) {
    return {
      offer: { ...base, recipient: null, nonce: null, expiresAt: null, id: null, request: null, token: null, description: 'MPP payments are not configured on this server' },
    }
  }
  const nonce = randomHex(32)
  const expiresAt = Date.now() + CHALLENGE_TTL_MS
  const amount = priceUnits(config, plugin.price).toString()
  const stored: StoredChallenge = { pluginId: plugin.id, amount, token: terms.token, recipient: terms.recipient, expiresAt }
  await kv.set(nonceKey(nonce), stored, { ttlMs: CHALLENGE_TTL_MS })
  const expires = new Date(expiresAt).toISOString()
  const description =
    `One ${plugin.id} call: transfer ${plugin.price} ${config.PAYMENT_CURRENCY} to the recipient on chain ${BASE_CHAIN_ID} in one transfer call ` +
    'whose calldata ends with keccak256(id || secret), secret being 32 random bytes of your own, sent only in the credential'
  const request = base64url.encode(
    JSON.stringify({
      amount,
      currency: terms.token,
      recipient: terms.recipient,
      description,
      methodDetails: { chainId: BASE_CHAIN_ID, decimals: config.PAYMENT_TOKEN_DECIMALS, credentialTypes: ['hash'], plugin: plugin.id, nonce, memo: MEMO_RULE },
    }),
  )
  const id = await challengeId(terms.secret, { method: MPP_METHOD, intent: MPP_INTENT, request, expires })
  const header = [
    authParam('amount', plugin.price),
    authParam('currency', config.PAYMENT_CURRENCY),
    authParam('recipient', terms.recipient),
    authParam('nonce', nonce),
    authParam('id', id),
    authParam('realm', realm),
    authParam('method', MPP_METHOD),
    authParam('intent', MPP_INTENT),
    authParam('request', request),
    authParam('expires', expires),
  ].join(', ')
  return {
    offer: { ...base, recipient: terms.recipient, token: terms.token, nonce, expiresAt: expires, id, request, description },
    header: `Payment ${header}`,
  }
}

const hex32 = /^0x[0-9a-fA-F]{64}$/
const CredentialSchema = z.object({
  challenge: z.object({
    id: z.string().regex(/^[0-9a-f]{64}$/i),
    request: z.string().max(4096),
    expires: z.string().max(64),
    // mppx echoes these; when it does they must be the gateway's
    method: z.literal(MPP_METHOD).optional(),
    intent: z.literal(MPP_INTENT).optional(),
  }),
  payload: z.object({ type: z.literal('hash').optional(), hash: z.string().max(80), secret: z.string().regex(hex32) }),
})

/** A decoded `Authorization: Payment <credential>`: the echoed challenge, the transaction hash and the payer's secret. */
export interface Credential {
  id: string
  request: string
  expires: string
  txHash: string
  secret: Hex
}

/** The credential in an `Authorization: Payment <credential>` value, or null when it is not one. */
export function decodeCredential(authorization: string): Credential | null {
  if (authorization.length > MAX_CREDENTIAL_CHARS) return null
  const m = /^Payment\s+([A-Za-z0-9_+/-]+={0,2})\s*$/i.exec(authorization)
  if (!m) return null
  try {
    // base64url as mppx writes it; plain base64 and padding tolerated
    const text = new TextDecoder().decode(base64url.decode(m[1].replace(/=+$/, '').replaceAll('+', '-').replaceAll('/', '_')))
    const parsed = CredentialSchema.safeParse(JSON.parse(text))
    if (!parsed.success) return null
    const { challenge, payload } = parsed.data
    return { id: challenge.id.toLowerCase(), request: challenge.request, expires: challenge.expires, txHash: payload.hash, secret: payload.secret.toLowerCase() as Hex }
  } catch {
    return null
  }
}

/** The terms of a credential's challenge, when its `id` is the HMAC of its echoed fields (else null: forged or altered). */
async function challengeTerms(secret: string, credential: Credential) {
  const expected = await challengeId(secret, { method: MPP_METHOD, intent: MPP_INTENT, request: credential.request, expires: credential.expires })
  if (!timingSafeEqual(expected, credential.id)) return null
  try {
    const parsed = RequestSchema.safeParse(JSON.parse(new TextDecoder().decode(base64url.decode(credential.request))))
    if (!parsed.success) return null
    const { amount, currency, recipient, methodDetails } = parsed.data
    return { amount: BigInt(amount), token: currency, recipient, chainId: methodDetails.chainId, pluginId: methodDetails.plugin, nonce: methodDetails.nonce }
  } catch {
    return null
  }
}

/** Whether the request carries an MPP credential (`Authorization: Payment …`), well-formed or not. */
export const hasPaymentAuthorization = (authorization: string | undefined) => !!authorization && /^Payment(\s|$)/i.test(authorization)

/** Puts a taken challenge back for what is left of its life (at least `minTtlMs`), unless one is there already. */
async function restoreChallenge(kv: Kv, nonce: string, stored: StoredChallenge, minTtlMs = 0) {
  const ttlMs = Math.max(stored.expiresAt - Date.now(), minTtlMs)
  if (ttlMs <= 0) return
  await kv.set(nonceKey(nonce), { ...stored, expiresAt: Date.now() + ttlMs }, { ttlMs, nx: true })
}

/** An accepted MPP payment: its receipt, and `release()` to give it back when the plugin could not serve the call. */
export interface MppPayment {
  receipt: Hex
  release(): Promise<void>
}

/**
 * Accepts the credential in `authorization` as payment for one call of `plugin`, or answers `{refused}` saying
 * why (malformed, MPP not configured, a challenge whose id is not the HMAC of its fields, another plugin's
 * or a lower price's challenge, an unknown or used nonce, and each on-chain refusal: not mined, reverted, wrong
 * token, wrong recipient, underpaid, memo not `keccak256(id ‖ secret)`, already used). In order: the challenge's
 * HMAC and terms are checked (nothing is read or used for a forged one), the nonce is taken from kv (so two
 * presentations of one credential cannot both pass), the transfer is verified on chain (read-only), then its hash
 * is recorded once in `chain_payments` (purpose `mpp`, reference the nonce). A refused credential uses nothing
 * up: its nonce is put back for the rest of its life, so a corrected or newly mined payment can be presented
 * against it. The chain not answering is 503 `CHAIN_UNAVAILABLE`, with the nonce put back too.
 */
/** A credential that does not pay for the call: the route answers 402 `payment_required` with why and a fresh challenge. */
export interface MppRefusal {
  refused: string
}
const refused = (why: string): MppRefusal => ({ refused: why })

export async function acceptCredential(
  services: Pick<Services, 'config' | 'kv' | 'reader'>,
  plugin: Plugin,
  authorization: string,
): Promise<MppPayment | MppRefusal> {
  const { config, kv, reader } = services
  const terms = paymentTerms(config)
  if (!terms) return refused('MPP payments are not configured on this server')
  const credential = decodeCredential(authorization)
  if (!credential) {
    return refused('The payment credential is malformed: expected base64url JSON {challenge: {id, request, expires}, payload: {hash, secret}}')
  }
  const challenge = await challengeTerms(terms.secret, credential)
  if (!challenge) return refused('The challenge was not issued by this server, or its fields were changed')

  // A challenge pays for its own plugin at no less than today's price (a plugin priced up since is refused).
  const price = priceUnits(config, plugin.price)
  const sameAddress = (a: string, b: Address) => isAddress(a) && isAddressEqual(a, b)
  const forThisCall =
    challenge.pluginId === plugin.id &&
    challenge.amount >= price &&
    challenge.chainId === BASE_CHAIN_ID &&
    sameAddress(challenge.token, terms.token) &&
    sameAddress(challenge.recipient, terms.recipient)
  if (!forThisCall) return refused('The challenge was issued for another plugin or price')

  const { nonce } = challenge
  const stored = await kv.take<StoredChallenge>(nonceKey(nonce))
  if (!stored || stored.expiresAt <= Date.now()) return refused('The challenge is unknown, expired or already used')
  const putBack = (minTtlMs = 0) => restoreChallenge(kv, nonce, stored, minTtlMs)

  let transfer
  try {
    const client = baseClient(config)
    await assertBaseChain(client, config.BASE_RPC_URL)
    const memo = paymentMemo(credential.id, credential.secret)
    transfer = await verifyTransfer(client, { txHash: credential.txHash, token: terms.token, recipient: terms.recipient, minAmount: challenge.amount, memo })
  } catch (e) {
    await putBack()
    if (e instanceof TransferError && e.reason !== 'unavailable') {
      log.info('gateway.mpp_refused', { pluginId: plugin.id, reason: e.reason })
      return refused(`Payment refused: ${e.message}`)
    }
    log.warn('gateway.chain_unavailable', { pluginId: plugin.id, ...errorFields(e) })
    throw new ApiError('CHAIN_UNAVAILABLE', { message: 'Payment verification unavailable: the chain did not answer', headers: { 'Retry-After': '5' } })
  }

  const recorded = await reader
    .asService('gatewayPayments', (db) =>
      db
        .insert(chainPayments)
        .values({
          txHash: transfer.txHash,
          purpose: 'mpp',
          reference: nonce,
          chainId: BASE_CHAIN_ID,
          token: transfer.token,
          payer: transfer.payer,
          recipient: transfer.recipient,
          amount: transfer.amount.toString(),
        })
        .onConflictDoNothing()
        .returning({ txHash: chainPayments.txHash }),
    )
    .catch(async (e: unknown) => {
      await putBack()
      throw e
    })
  if (recorded.length === 0) {
    await putBack()
    return refused('Payment refused: this transaction has already paid for a call')
  }
  log.info('gateway.mpp_accepted', { pluginId: plugin.id, amount: transfer.amount.toString() })
  return {
    receipt: transfer.txHash,
    async release() {
      await reader.asService('gatewayPayments', (db) => db.delete(chainPayments).where(eq(chainPayments.txHash, transfer.txHash)))
      await putBack(RETRY_GRACE_MS)
    },
  }
}
