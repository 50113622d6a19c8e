import type { Context } from 'hono'
import { erc20Abi, getAddress, hashMessage, isAddress, parseErc6492Signature, parseUnits, type Address, type Hex } from 'viem'
import { getChainId, getCode, readContract } from 'viem/actions'
import { checkBaseMessage, invalidSignature, proofClaim } from '../../lib/auth/wallet-proof'
import { assertBaseChain, BASE_CHAIN_ID, type baseClient } from '../../lib/chain'
import type { AppEnv } from '../../lib/context'
import type { Config } from '../../lib/config'
import { ApiError } from '../../lib/http/errors'
import { errorFields, log } from '../../lib/log'
import { TransferError, verifyTransfer, type VerifiedTransfer } from '../../lib/payments/transfer'

/** Spec "Limits": holders of 2,500,000 whole station tokens stream free; everyone else pays 5 USDC a session. */
export const STATION_TOKEN_HOLDING = 2_500_000n
export const SESSION_FEE = '5'

type Client = ReturnType<typeof baseClient>

const chainUnavailable = () => new ApiError('CHAIN_UNAVAILABLE')

/** Runs chain reads; any RPC failure (or a mis-pointed `BASE_RPC_URL`) is 502 `Chain unavailable`, logged. */
async function onChain<T>(what: string, requestId: string | undefined, read: () => Promise<T>): Promise<T> {
  try {
    return await read()
  } catch (e) {
    log.error('radio.chain_read_failed', { requestId, what, ...errorFields(e) })
    throw chainUnavailable()
  }
}

/**
 * The wallet must be a smart wallet: an account with contract code on chain 8453 (deployed; a counterfactual
 * account is deployed by its first transaction). An EOA is 403.
 */
export async function requireSmartWallet(client: Client, rpcUrl: string, wallet: Address, requestId?: string) {
  const code = await onChain('getCode', requestId, async () => {
    await assertBaseChain(client, rpcUrl)
    return getCode(client, { address: wallet })
  })
  if (!code || code === '0x') throw new ApiError('SMART_WALLET_REQUIRED')
}

const ERC1271_MAGIC = '0x1626ba7e'
const erc1271Abi = [
  {
    type: 'function',
    name: 'isValidSignature',
    stateMutability: 'view',
    inputs: [{ name: 'hash', type: 'bytes32' }, { name: 'signature', type: 'bytes' }],
    outputs: [{ type: 'bytes4' }],
  },
] as const

/**
 * The DJ's wallet proof (lib/auth/wallet-proof.ts, statement `radio`): the message's rules (nonce spent first),
 * then the wallet must be a smart wallet (403, as `requireSmartWallet`), then its ERC-1271 `isValidSignature`
 * must accept the signature of the message's EIP-191 hash (an ERC-6492 wrapper, which a wallet may still add once
 * deployed, is unwrapped). Only deployed smart wallets stream, so the EOA and counterfactual checks of wallet
 * sign-in (and their ~34 KB of bundled code) are not needed here. A refusal is 401 `SIGNATURE_INVALID`; an
 * unusable chain 502.
 */
export async function requireDjProof(c: Context<AppEnv>, client: Client, wallet: Address, proof: { message?: string; signature?: string }) {
  const claim = proofClaim(wallet, proof)
  await checkBaseMessage(c, claim, 'radio')
  const requestId = c.var.requestId
  await requireSmartWallet(client, c.var.services.config.BASE_RPC_URL, wallet, requestId)
  let signature: Hex
  try {
    signature = parseErc6492Signature(claim.signature).signature
  } catch {
    throw invalidSignature() // the 6492 suffix on something that does not decode
  }
  const answer = await readContract(client, { address: wallet, abi: erc1271Abi, functionName: 'isValidSignature', args: [hashMessage(claim.message), signature] }).catch(
    (e: unknown) => e,
  )
  if (answer === ERC1271_MAGIC) return
  // A revert is a refusal; an unreachable RPC is not: ask the chain before answering 401.
  if ((await getChainId(client).catch(() => null)) !== BASE_CHAIN_ID) {
    log.error('radio.chain_read_failed', { requestId, what: 'isValidSignature', ...(answer instanceof Error ? errorFields(answer) : {}) })
    throw chainUnavailable()
  }
  throw invalidSignature()
}

/** The station token as configured, or null (no holding path). A malformed address is logged and treated as unset. */
export function stationToken(config: Pick<Config, 'RADIO_STATION_TOKEN'>): Address | null {
  const token = config.RADIO_STATION_TOKEN?.trim()
  if (!token) return null
  if (!isAddress(token, { strict: false })) {
    log.error('radio.station_token_misconfigured', { note: 'RADIO_STATION_TOKEN must be an address' })
    return null
  }
  return getAddress(token)
}

/** `balanceOf(wallet)` ≥ 2,500,000 whole tokens, scaled by the token's own `decimals()` (one batched RPC call). */
export async function holdsStationToken(client: Client, token: Address, wallet: Address, requestId?: string) {
  const [balance, decimals] = await onChain('station token', requestId, () =>
    Promise.all([
      readContract(client, { address: token, abi: erc20Abi, functionName: 'balanceOf', args: [wallet] }),
      readContract(client, { address: token, abi: erc20Abi, functionName: 'decimals' }),
    ]),
  )
  return balance >= STATION_TOKEN_HOLDING * 10n ** BigInt(decimals)
}

/** Where the fee goes and in what: 503 `Radio payments not configured` without `PAYMENT_RECIPIENT`. */
export function feeTerms(config: Pick<Config, 'PAYMENT_RECIPIENT' | 'PAYMENT_TOKEN_ADDRESS' | 'PAYMENT_TOKEN_DECIMALS' | 'PAYMENT_CURRENCY'>) {
  const recipient = config.PAYMENT_RECIPIENT?.trim()
  if (!recipient || !isAddress(recipient, { strict: false }) || !isAddress(config.PAYMENT_TOKEN_ADDRESS, { strict: false })) {
    throw new ApiError('NOT_CONFIGURED', 'Radio payments not configured')
  }
  return {
    amount: SESSION_FEE,
    currency: config.PAYMENT_CURRENCY,
    token: getAddress(config.PAYMENT_TOKEN_ADDRESS),
    recipient: getAddress(recipient),
    minAmount: parseUnits(SESSION_FEE, config.PAYMENT_TOKEN_DECIMALS),
    chainId: BASE_CHAIN_ID,
  }
}

/**
 * The session fee, proved by `txHash`: a mined transfer of at least 5 USDC from `wallet` to the platform wallet,
 * carrying no memo (a direct transfer with calldata after its arguments pays the gateway call its memo names:
 * `memo_bound`). A refusal is 402 `PAYMENT_REJECTED` with its `reason`; an unreachable chain 502.
 */
export async function verifySessionFee(client: Client, terms: ReturnType<typeof feeTerms>, wallet: Address, txHash: string, requestId?: string) {
  try {
    const verified: VerifiedTransfer = await verifyTransfer(client, {
      txHash,
      token: terms.token,
      recipient: terms.recipient,
      minAmount: terms.minAmount,
      payer: wallet,
      memo: null,
    })
    return { ...verified, chainId: BASE_CHAIN_ID }
  } catch (e) {
    if (!(e instanceof TransferError)) throw e
    if (e.reason === 'unavailable') {
      log.error('radio.chain_read_failed', { requestId, what: 'payment' })
      throw chainUnavailable()
    }
    throw new ApiError('PAYMENT_REJECTED', { message: e.message, extra: { reason: e.reason } })
  }
}
