import type { Context } from 'hono'
import { isAddressEqual, type Hex } from 'viem'
import { parseSiweMessage, validateSiweMessage } from 'viem/siwe'
import { BASE_CHAIN_ID } from '../chain'
import type { AppEnv } from '../context'
import { ApiError } from '../http/errors'
import { consumeNonce } from './wallet-nonce'

export interface WalletClaim {
  address: Hex
  message: string
  signature: Hex
}

/** Wallet and server clocks differ a little: an `Issued At` up to a minute ahead is accepted. */
export const CLOCK_SKEW_MS = 60 * 1000

/**
 * What a wallet proof is for, as the `statement` line of its EIP-4361 message, word for word. A route that grants
 * something to a wallet takes only its own statement; sign-in takes any statement but these. So a signature made
 * for one purpose (or obtained by a page for one) is never taken for another.
 */
export const WALLET_PROOF_STATEMENTS = {
  radio: 'Start a DJ radio session with this wallet.',
  paymentSession: 'Open a payment session with this wallet.',
} as const
export type WalletProofPurpose = keyof typeof WALLET_PROOF_STATEMENTS


export async function spendNonce(c: Context<AppEnv>, nonce: string) {
  if (!(await consumeNonce(c.var.services.kv, nonce))) throw new ApiError('NONCE_INVALID')
}

export function checkAddress(claimed: Hex, signed: Hex) {
  if (!isAddressEqual(claimed, signed)) throw new ApiError('ADDRESS_MISMATCH')
}

export function checkIssuedAt(issuedAt: Date, now: number) {
  if (issuedAt.getTime() > now + CLOCK_SKEW_MS) throw new ApiError('MESSAGE_NOT_YET_VALID')
}

function checkStatement(statement: string | undefined, purpose: WalletProofPurpose | undefined) {
  if (purpose) {
    const expected = WALLET_PROOF_STATEMENTS[purpose]
    if (statement !== expected) throw new ApiError('MESSAGE_MALFORMED', `Message statement must be: ${expected}`)
  } else if ((Object.values(WALLET_PROOF_STATEMENTS) as string[]).includes(statement ?? '')) {
    throw new ApiError('MESSAGE_MALFORMED', 'Message is a wallet proof, not a sign-in')
  }
}

/**
 * Chain 8453: every rule of an EIP-4361 message for this service but its signature (wallet-signature.ts checks
 * any wallet's; radio checks a deployed smart wallet's). The nonce is spent before anything else is checked.
 * `purpose`: the proof this message must be (its statement); none for sign-in.
 */
export async function checkBaseMessage(c: Context<AppEnv>, claim: WalletClaim, purpose?: WalletProofPurpose) {
  const { config } = c.var.services
  const siwe = parseSiweMessage(claim.message)
  const { domain, address, uri, version, chainId, nonce, issuedAt } = siwe
  if (!domain || !address || !uri || !version || !chainId || !nonce || !issuedAt) throw new ApiError('MESSAGE_MALFORMED')
  if ([issuedAt, siwe.expirationTime, siwe.notBefore].some((d) => d && Number.isNaN(d.getTime()))) throw new ApiError('MESSAGE_MALFORMED')

  await spendNonce(c, nonce)
  const first = new URL(config.baseUrl)
  if (domain !== first.host || (siwe.scheme && `${siwe.scheme}:` !== first.protocol)) {
    throw new ApiError('DOMAIN_MISMATCH')
  }
  if (!config.APP_ORIGIN.includes(originOf(uri))) throw new ApiError('URI_MISMATCH')
  if (chainId !== BASE_CHAIN_ID) throw new ApiError('CHAIN_MISMATCH')
  checkStatement(siwe.statement, purpose)
  checkAddress(claim.address, address)
  const now = Date.now()
  checkIssuedAt(issuedAt, now)
  if (siwe.expirationTime && now >= siwe.expirationTime.getTime()) throw new ApiError('MESSAGE_EXPIRED')
  if (siwe.notBefore && now < siwe.notBefore.getTime()) throw new ApiError('MESSAGE_NOT_YET_VALID')
  // viem's own EIP-4361 rules (version 1, nonce shape, ...) as a last guard behind the precise checks above.
  if (!validateSiweMessage({ message: siwe, address: claim.address, domain: first.host, nonce, time: new Date(now) })) {
    throw new ApiError('MESSAGE_MALFORMED')
  }
}

export const invalidSignature = () => new ApiError('SIGNATURE_INVALID')

/**
 * The claim a request's wallet proof makes (spec: a wallet named in a request that grants it something signs a
 * server-issued nonce): `message`, the EIP-4361 message over a nonce from `/api/auth/nonce` with the purpose's
 * statement, and `signature`, the wallet's. Without them 401 `SIGNATURE_REQUIRED`.
 */
export function proofClaim(wallet: string, proof: { message?: string; signature?: string }): WalletClaim {
  if (!proof.message || !proof.signature) {
    throw new ApiError('SIGNATURE_REQUIRED', 'Wallet proof required: `message` and `signature`')
  }
  return { address: wallet as Hex, message: proof.message, signature: proof.signature as Hex }
}

const ANY_WALLET = "that wallet's signature of it (EOA, ERC-1271 deployed, or ERC-6492 counterfactual; the latter two are checked on Base)"

/** How a route documents the proof it requires (its OpenAPI description); `signedBy` says whose signatures count. */
export const walletProofDoc = (purpose: WalletProofPurpose, walletField: string, signedBy = ANY_WALLET) =>
  `**Wallet proof** (required before anything else is looked up): \`message\`, an EIP-4361 (SIWE) message as for ` +
  '`POST /api/wallet-auth` on Base (a fresh single-use nonce from `/api/auth/nonce`, valid 10 minutes; `domain` the ' +
  'host of the first APP_ORIGIN, `URI` on one of APP_ORIGIN, `Chain ID` 8453, `Issued At` not more than 60 s ahead, ' +
  `\`Expiration Time\` not passed) whose address is \`${walletField}\` and whose statement is exactly ` +
  `\`${WALLET_PROOF_STATEMENTS[purpose]}\`, and \`signature\`, ${signedBy}. The nonce is spent by the first attempt, ` +
  'whatever its outcome. Refusals: 401 `SIGNATURE_REQUIRED` (no `message` or `signature`), `NONCE_INVALID` ' +
  '(unknown, used or expired), `DOMAIN_MISMATCH`, `URI_MISMATCH`, `CHAIN_MISMATCH`, `ADDRESS_MISMATCH` (the ' +
  `message names another wallet than \`${walletField}\`), \`MESSAGE_EXPIRED\`, \`MESSAGE_NOT_YET_VALID\`, ` +
  '`SIGNATURE_INVALID`; 400 `MESSAGE_MALFORMED` (not EIP-4361, or another statement: a sign-in message is no proof).'

function originOf(uri: string) {
  try {
    return new URL(uri).origin
  } catch {
    return ''
  }
}
