import { eq } from 'drizzle-orm'
import { base64url } from 'jose'
import { getAddress, isAddress, isAddressEqual, parseUnits, type Address, type Hex } from 'viem'
import { z } from 'zod'
import { chainPayments } from '../../schema'
import { assertBaseChain, BASE_CHAIN_ID, baseClient } from '../chain'
import type { Config } from '../config'
import type { Services } from '../context'
import { randomHex } from '../crypto'
import { ApiError } from '../http/errors'
import type { Kv } from '../kv/types'
import { errorFields, log } from '../log'
import { TransferError, verifyTransfer } from '../payments/transfer'
import { PaymentRefused } from './errors'
import type { Plugin } from './plugins'

/**
 * MPP, the "Payment" HTTP authentication scheme (IETF draft-ryan-httpauth-payment), as the gateway speaks it: a
 * 402 challenge names a price in the payment token, the recipient and a single-use nonce; the caller pays with a
 * direct ERC-20 `transfer` on chain 8453 with the nonce's 32 bytes appended to the calldata (the memo), then
 * repeats the call with `Authorization: Payment <credential>`, the credential being mppx's encoding:
 * base64url(JSON `{challenge: {id: <nonce>, ...}, payload: {type: 'hash', hash: <tx hash>}}`).
 */
export const CHALLENGE_TTL_MS = 5 * 60 * 1000
/** A challenge put back after its call failed upstream stays usable at least this long, so it can be retried. */
export const RETRY_GRACE_MS = 60 * 1000
/** The method and intent names of mppx's challenge encoding: an EVM charge proved by a transaction hash. */
export const MPP_METHOD = 'evm'
export const MPP_INTENT = 'charge'
const MAX_CREDENTIAL_CHARS = 8192

export const nonceKey = (nonce: string) => `gateway:mpp:${nonce}`

/** What a nonce was issued for (kv, single use): a credential must present it for the same plugin and terms. */
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

/** The recipient and token MPP payments go to, or null when MPP is not configured (no valid `PAYMENT_RECIPIENT`). */
export function paymentTerms(config: Config): { recipient: Address; token: Address } | null {
  const recipient = config.PAYMENT_RECIPIENT
  if (!recipient || !isAddress(recipient) || !isAddress(config.PAYMENT_TOKEN_ADDRESS)) return null
  return { recipient: getAddress(recipient), token: getAddress(config.PAYMENT_TOKEN_ADDRESS) }
}

/** The `mpp` part of a 402 body (spec fields, plus the token contract and chain a payer needs). */
export interface MppOffer {
  scheme: 'Payment'
  amount: string
  currency: string
  recipient: string | null
  description: string
  nonce: string | null
  expiresAt: string | null
  token: string | null
  chainId: number
}

const authParam = (name: string, value: string) => `${name}="${value.replace(/[\\"]/g, '\\$&')}"`

/**
 * A fresh challenge for one call of `plugin`: its nonce (32 random bytes, hex) stored for 5 minutes, the body's
 * `mpp` part and the `WWW-Authenticate` header. The header carries the spec's `amount`, `currency` and
 * `recipient`, the `nonce`, and mppx's `id` (the nonce), `realm`, `method`, `intent`, `request` and `expires`,
 * so an mppx client can parse it. Without MPP configured: the offer says so and there is no header.
 */
export async function issueChallenge(services: Pick<Services, 'config' | 'kv'>, plugin: Plugin, realm: string): Promise<{ offer: MppOffer; header?: string }> {
  const { config, kv } = services
  const terms = paymentTerms(config)
  const base = { scheme: 'Payment' as const, amount: plugin.price, currency: config.PAYMENT_CURRENCY, chainId: BASE_CHAIN_ID }
  if (!terms) {
    return { offer: { ...base, recipient: null, nonce: null, expiresAt: null, token: null, description: 'MPP payments are not configured on this server' } }
  }
  const nonce = randomHex(32)
  const expiresAt = Date.now() + CHALLENGE_TTL_MS
  const amount = priceUnits(config, plugin.price).toString()
  const stored: StoredChallenge = { pluginId: plugin.id, amount, token: terms.token, recipient: terms.recipient, expiresAt }
  await kv.set(nonceKey(nonce), stored, { ttlMs: CHALLENGE_TTL_MS })
  const expires = new Date(expiresAt).toISOString()
  const description = `One ${plugin.id} call: transfer ${plugin.price} ${config.PAYMENT_CURRENCY} to the recipient on chain ${BASE_CHAIN_ID}, the nonce appended to the calldata`
  const request = {
    amount,
    currency: terms.token,
    recipient: terms.recipient,
    description,
    methodDetails: { chainId: BASE_CHAIN_ID, decimals: config.PAYMENT_TOKEN_DECIMALS, credentialTypes: ['hash'], memo: `0x${nonce}` },
  }
  const header = [
    authParam('amount', plugin.price),
    authParam('currency', config.PAYMENT_CURRENCY),
    authParam('recipient', terms.recipient),
    authParam('nonce', nonce),
    authParam('id', nonce),
    authParam('realm', realm),
    authParam('method', MPP_METHOD),
    authParam('intent', MPP_INTENT),
    authParam('request', base64url.encode(JSON.stringify(request))),
    authParam('expires', expires),
  ].join(', ')
  return { offer: { ...base, recipient: terms.recipient, token: terms.token, nonce, expiresAt: expires, description }, header: `Payment ${header}` }
}

const CredentialSchema = z.object({
  challenge: z.object({ id: z.string().regex(/^[0-9a-f]{64}$/i) }),
  payload: z.object({ type: z.literal('hash').optional(), hash: z.string().max(80) }),
})

/** The nonce and transaction hash of an `Authorization: Payment <credential>` value, or null when it is not one. */
export function decodeCredential(authorization: string): { nonce: string; txHash: string } | null {
  if (authorization.length > MAX_CREDENTIAL_CHARS) return null
  const m = /^Payment\s+([A-Za-z0-9_+/-]+={0,2})\s*$/i.exec(authorization)
  if (!m) return null
  try {
    // base64url as mppx writes it; plain base64 and padding tolerated
    const text = new TextDecoder().decode(base64url.decode(m[1].replace(/=+$/, '').replaceAll('+', '-').replaceAll('/', '_')))
    const parsed = CredentialSchema.safeParse(JSON.parse(text))
    return parsed.success ? { nonce: parsed.data.challenge.id.toLowerCase(), txHash: parsed.data.payload.hash } : null
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
 * Accepts the credential in `authorization` as payment for one call of `plugin`, or throws `PaymentRefused`
 * saying why (malformed, MPP not configured, unknown or used nonce, another plugin's or price's challenge, and
 * each on-chain refusal: not mined, reverted, wrong token, wrong recipient, underpaid, not bound to the nonce,
 * already used). In order: the nonce is taken from kv (so two presentations of one credential cannot both pass),
 * the transfer is verified on chain (read-only), then its hash is recorded once in `chain_payments` (purpose
 * `mpp`, reference the nonce). A refused credential uses nothing up: its nonce is put back for the rest of its
 * life, so a corrected or newly mined payment can be presented against it. The chain not answering is 503
 * `CHAIN_UNAVAILABLE`, with the nonce put back too.
 */
export async function acceptCredential(services: Pick<Services, 'config' | 'kv' | 'reader'>, plugin: Plugin, authorization: string): Promise<MppPayment> {
  const { config, kv, reader } = services
  const terms = paymentTerms(config)
  if (!terms) throw new PaymentRefused('MPP payments are not configured on this server')
  const credential = decodeCredential(authorization)
  if (!credential) throw new PaymentRefused('The payment credential is malformed: expected base64url JSON {challenge: {id}, payload: {hash}}')
  const { nonce } = credential
  const stored = await kv.take<StoredChallenge>(nonceKey(nonce))
  if (!stored || stored.expiresAt <= Date.now()) throw new PaymentRefused('The challenge is unknown, expired or already used')
  const putBack = (minTtlMs = 0) => restoreChallenge(kv, nonce, stored, minTtlMs)

  const amount = priceUnits(config, plugin.price)
  const sameTerms =
    stored.pluginId === plugin.id &&
    stored.amount === amount.toString() &&
    isAddressEqual(stored.token as Address, terms.token) &&
    isAddressEqual(stored.recipient as Address, terms.recipient)
  if (!sameTerms) {
    await putBack()
    throw new PaymentRefused('The challenge was issued for another plugin or price')
  }

  let transfer
  try {
    const client = baseClient(config)
    await assertBaseChain(client, config.BASE_RPC_URL)
    transfer = await verifyTransfer(client, { txHash: credential.txHash, token: terms.token, recipient: terms.recipient, minAmount: amount, memo: `0x${nonce}` })
  } catch (e) {
    await putBack()
    if (e instanceof TransferError && e.reason !== 'unavailable') {
      log.info('gateway.mpp_refused', { pluginId: plugin.id, reason: e.reason })
      throw new PaymentRefused(`Payment refused: ${e.message}`)
    }
    log.warn('gateway.chain_unavailable', { pluginId: plugin.id, ...errorFields(e) })
    throw new ApiError(503, 'Payment verification unavailable: the chain did not answer', { code: 'CHAIN_UNAVAILABLE', headers: { 'Retry-After': '5' } })
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
    throw new PaymentRefused('Payment refused: this transaction has already paid for a call')
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
