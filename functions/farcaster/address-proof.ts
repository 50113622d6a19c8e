import { getAddress, type Hex } from 'viem'
import { assertBaseChain, baseClient } from '../../lib/chain'
import type { Config } from '../../lib/config'
import { sha256Hex } from '../../lib/crypto'
import { ApiError } from '../../lib/http/errors'
import { errorFields, log } from '../../lib/log'
import { farcasterDomain } from './id-token'
import { verifyMessage } from 'viem/actions'

/**
 * The text the wallet signs (EIP-191 `personal_sign`) to prove it holds `address` for this sign-in. It
 * names the FID and the SHA-256 of the very ID token sent with it, so a signature cannot be reused with
 * another user's token, nor outlive the token (Quick Auth tokens last an hour).
 */
export async function addressProofMessage(config: Config, p: { address: string; fid: number; token: string }) {
  return [
    `${farcasterDomain(config)} asks you to prove that you hold this address for Farcaster sign-in.`,
    '',
    `Address: ${getAddress(p.address.toLowerCase())}`,
    `FID: ${p.fid}`,
    `Token: ${await sha256Hex(p.token)}`,
  ].join('\n')
}

export const ADDRESS_PROOF_TEMPLATE =
  '{domain} asks you to prove that you hold this address for Farcaster sign-in.\\n\\nAddress: {checksummed address}\\n' +
  'FID: {fid}\\nToken: {lower-case hex SHA-256 of the ID token}'

const unproven = () => new ApiError('ADDRESS_NOT_PROVEN')

/**
 * 403 `ADDRESS_NOT_PROVEN` unless `signature` is `address`'s signature of the proof message: an EOA
 * signature is recovered offline; a smart wallet's (ERC-1271, or ERC-6492 before deployment) is checked
 * with an `eth_call` on chain 8453, and an unreachable RPC is then 502 `Chain unavailable`.
 */
export async function assertAddressProof(config: Config, p: { address: string; fid: number; token: string; signature?: Hex }, requestId?: string) {
  if (!p.signature) throw unproven()
  const message = await addressProofMessage(config, p)
  const address = getAddress(p.address.toLowerCase())
  const client = baseClient(config)
  const valid = await verifyMessage(client, { address, message, signature: p.signature, mode: 'eoa' }).catch(() => false)
  if (valid) return
  // viem reports an unreachable (or wrong) RPC as an invalid signature: tell the two apart before a 403.
  try {
    await assertBaseChain(client, config.BASE_RPC_URL)
  } catch (e) {
    log.error('farcaster.address_proof_chain_unusable', { requestId, ...errorFields(e) })
    throw new ApiError('CHAIN_UNAVAILABLE')
  }
  throw unproven()
}
