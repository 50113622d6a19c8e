import type { Context } from 'hono'
import { verifyMessage } from 'viem'
import { TEMPO_CHAIN_ID } from '../../lib/chain'
import type { AppEnv } from '../../lib/context'
import { ApiError } from '../../lib/http/errors'
import { checkAddress, checkIssuedAt, spendNonce, type WalletClaim } from '../../lib/auth/wallet-proof'
import { parseTempoMessage } from './tempo-message'

/** A Tempo message carries no expiration of its own: it is good for as long as its nonce. */
export const TEMPO_MAX_AGE_MS = 10 * 60 * 1000

/** Chain 4217: the plain message of `tempo-message.ts`, EOA only (recovered offline, no RPC). */
export async function verifyTempo(c: Context<AppEnv>, claim: WalletClaim) {
  const { config } = c.var.services
  const msg = parseTempoMessage(claim.message)
  if (!msg) throw new ApiError('MESSAGE_MALFORMED')

  await spendNonce(c, msg.nonce)
  if (msg.domain !== new URL(config.baseUrl).host) throw new ApiError('DOMAIN_MISMATCH')
  if (msg.chainId !== TEMPO_CHAIN_ID) throw new ApiError('CHAIN_MISMATCH')
  checkAddress(claim.address, msg.address)
  const now = Date.now()
  checkIssuedAt(msg.issuedAt, now)
  if (now - msg.issuedAt.getTime() > TEMPO_MAX_AGE_MS) throw new ApiError('MESSAGE_EXPIRED')

  // A signature of the wrong length or an unrecoverable one throws: both are simply invalid.
  const valid = await verifyMessage({ address: claim.address, message: claim.message, signature: claim.signature }).catch(() => false)
  if (!valid) throw new ApiError('SIGNATURE_INVALID')
}
