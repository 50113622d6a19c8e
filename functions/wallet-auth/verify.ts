import type { Context } from 'hono'
import { isAddressEqual, verifyMessage, type Hex } from 'viem'
import { parseSiweMessage, validateSiweMessage } from 'viem/siwe'
import { BASE_CHAIN_ID, baseClient, TEMPO_CHAIN_ID } from '../../lib/chain'
import type { AppEnv } from '../../lib/context'
import type { ErrorCode } from '../../lib/http/error-codes'
import { ApiError } from '../../lib/http/errors'
import { consumeNonce } from './nonce'
import { parseTempoMessage } from './tempo-message'
import { errorFields, log } from '../../lib/log'
import { getChainId, verifyMessage as verifyMessageWith } from 'viem/actions'

export interface WalletClaim {
  address: Hex
  message: string
  signature: Hex
}

/** Wallet and server clocks differ a little: an `Issued At` up to a minute ahead is accepted. */
export const CLOCK_SKEW_MS = 60 * 1000
/** A Tempo message carries no expiration of its own: it is good for as long as its nonce. */
export const TEMPO_MAX_AGE_MS = 10 * 60 * 1000

const refuse = (error: string, code: ErrorCode) => new ApiError(401, error, { code })
const malformed = () => new ApiError(400, 'Malformed sign-in message', { code: 'MESSAGE_MALFORMED' })

async function spendNonce(c: Context<AppEnv>, nonce: string) {
  if (!(await consumeNonce(c.var.services.kv, nonce))) throw refuse('Invalid or expired nonce', 'NONCE_INVALID')
}

function checkAddress(claimed: Hex, signed: Hex) {
  if (!isAddressEqual(claimed, signed)) throw refuse('Message address does not match', 'ADDRESS_MISMATCH')
}

function checkIssuedAt(issuedAt: Date, now: number) {
  if (issuedAt.getTime() > now + CLOCK_SKEW_MS) throw refuse('Message is not yet valid', 'MESSAGE_NOT_YET_VALID')
}

/**
 * Chain 8453: an EIP-4361 message for this service. The nonce is spent before anything else is checked.
 * EOA signatures are recovered offline; anything else (ERC-1271 deployed, ERC-6492 counterfactual) is
 * checked with an `eth_call` on Base.
 */
export async function verifyBase(c: Context<AppEnv>, claim: WalletClaim) {
  const { config } = c.var.services
  const siwe = parseSiweMessage(claim.message)
  const { domain, address, uri, version, chainId, nonce, issuedAt } = siwe
  if (!domain || !address || !uri || !version || !chainId || !nonce || !issuedAt) throw malformed()
  if ([issuedAt, siwe.expirationTime, siwe.notBefore].some((d) => d && Number.isNaN(d.getTime()))) throw malformed()

  await spendNonce(c, nonce)
  const first = new URL(config.baseUrl)
  if (domain !== first.host || (siwe.scheme && `${siwe.scheme}:` !== first.protocol)) {
    throw refuse('Message domain does not match', 'DOMAIN_MISMATCH')
  }
  if (!config.APP_ORIGIN.includes(originOf(uri))) throw refuse('Message URI does not match', 'URI_MISMATCH')
  if (chainId !== BASE_CHAIN_ID) throw refuse('Message chain does not match', 'CHAIN_MISMATCH')
  checkAddress(claim.address, address)
  const now = Date.now()
  checkIssuedAt(issuedAt, now)
  if (siwe.expirationTime && now >= siwe.expirationTime.getTime()) throw refuse('Message has expired', 'MESSAGE_EXPIRED')
  if (siwe.notBefore && now < siwe.notBefore.getTime()) throw refuse('Message is not yet valid', 'MESSAGE_NOT_YET_VALID')
  // viem's own EIP-4361 rules (version 1, nonce shape, ...) as a last guard behind the precise checks above.
  if (!validateSiweMessage({ message: siwe, address: claim.address, domain: first.host, nonce, time: new Date(now) })) {
    throw malformed()
  }

  const client = baseClient(config)
  const { address: claimed, message, signature } = claim
  const valid = await verifyMessageWith(client, { address: claimed, message, signature, mode: 'eoa' }).catch(() => false)
  if (valid) return
  // viem reports an unreachable (or wrong) RPC as an invalid signature: tell the two apart before a 401.
  const chain = await getChainId(client).catch((e: unknown) => e)
  if (chain !== BASE_CHAIN_ID) {
    log.error('wallet.base_rpc_unusable', { requestId: c.var.requestId, ...(chain instanceof Error ? errorFields(chain) : { chainId: String(chain) }) })
    throw new ApiError(503, 'Signature verification unavailable', { code: 'CHAIN_UNAVAILABLE' })
  }
  throw refuse('Invalid signature', 'SIGNATURE_INVALID')
}

/** Chain 4217: the plain message of `tempo-message.ts`, EOA only (recovered offline, no RPC). */
export async function verifyTempo(c: Context<AppEnv>, claim: WalletClaim) {
  const { config } = c.var.services
  const msg = parseTempoMessage(claim.message)
  if (!msg) throw malformed()

  await spendNonce(c, msg.nonce)
  if (msg.domain !== new URL(config.baseUrl).host) throw refuse('Message domain does not match', 'DOMAIN_MISMATCH')
  if (msg.chainId !== TEMPO_CHAIN_ID) throw refuse('Message chain does not match', 'CHAIN_MISMATCH')
  checkAddress(claim.address, msg.address)
  const now = Date.now()
  checkIssuedAt(msg.issuedAt, now)
  if (now - msg.issuedAt.getTime() > TEMPO_MAX_AGE_MS) throw refuse('Message has expired', 'MESSAGE_EXPIRED')

  // A signature of the wrong length or an unrecoverable one throws: both are simply invalid.
  const valid = await verifyMessage({ address: claim.address, message: claim.message, signature: claim.signature }).catch(() => false)
  if (!valid) throw refuse('Invalid signature', 'SIGNATURE_INVALID')
}

function originOf(uri: string) {
  try {
    return new URL(uri).origin
  } catch {
    return ''
  }
}
