import type { Context } from 'hono'
import { getChainId, verifyMessage } from 'viem/actions'
import { BASE_CHAIN_ID, baseClient } from '../chain'
import type { AppEnv } from '../context'
import { ApiError } from '../http/errors'
import { errorFields, log } from '../log'
import { checkBaseMessage, invalidSignature, proofClaim, type WalletClaim, type WalletProofPurpose } from './wallet-proof'

export interface BaseOptions {
  /** The proof this message must be (its statement); none for sign-in. */
  purpose?: WalletProofPurpose
  /** The route's own answer when Base cannot be asked; 503 `CHAIN_UNAVAILABLE` by default. */
  unavailable?: () => ApiError
}

/**
 * Chain 8453: an EIP-4361 message for this service (checkBaseMessage) signed by any kind of wallet. EOA
 * signatures are recovered offline; anything else (ERC-1271 deployed, ERC-6492 counterfactual) is checked with
 * an `eth_call` on Base. (Its ERC-6492 and secp256k1 code weighs ~34 KB gzipped: radio, near its bundle budget
 * and open to deployed smart wallets only, checks ERC-1271 alone, functions/radio/access.ts.)
 */
export async function verifyBase(c: Context<AppEnv>, claim: WalletClaim, opts: BaseOptions = {}) {
  await checkBaseMessage(c, claim, opts.purpose)
  const client = baseClient(c.var.services.config)
  const { address, message, signature } = claim
  const valid = await verifyMessage(client, { address, message, signature, mode: 'eoa' }).catch(() => false)
  if (valid) return
  // viem reports an unreachable (or wrong) RPC as an invalid signature: tell the two apart before a 401.
  const chain = await getChainId(client).catch((e: unknown) => e)
  if (chain !== BASE_CHAIN_ID) {
    log.error('wallet.base_rpc_unusable', { requestId: c.var.requestId, ...(chain instanceof Error ? errorFields(chain) : { chainId: String(chain) }) })
    throw opts.unavailable?.() ?? new ApiError('CHAIN_UNAVAILABLE', 'Signature verification unavailable')
  }
  throw invalidSignature()
}

/** The request's proof that it holds `wallet` (proofClaim), from any kind of wallet. Call it after validation and the rate limit, before any grant. */
export async function requireWalletProof(
  c: Context<AppEnv>,
  wallet: string,
  proof: { message?: string; signature?: string },
  purpose: WalletProofPurpose,
  unavailable?: () => ApiError,
) {
  await verifyBase(c, proofClaim(wallet, proof), { purpose, unavailable })
}
