import { erc20Abi, getAddress, isAddress, parseUnits, type Address } from 'viem'
import { getCode, readContract } from 'viem/actions'
import { assertBaseChain, BASE_CHAIN_ID, type baseClient } from '../chain'
import type { Config } from '../config'
import { ApiError } from '../http/errors'
import { errorFields, log } from '../log'
import { TransferError, verifyTransfer, type VerifiedTransfer } from '../payments/transfer'

/** Spec "Limits": holders of 2,500,000 whole station tokens stream free; everyone else pays 5 USDC a session. */
export const STATION_TOKEN_HOLDING = 2_500_000n
export const SESSION_FEE = '5'

type Client = ReturnType<typeof baseClient>

export const chainUnavailable = () => new ApiError(502, 'Chain unavailable', { code: 'CHAIN_UNAVAILABLE' })

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
  if (!code || code === '0x') throw new ApiError(403, 'A smart wallet is required', { code: 'SMART_WALLET_REQUIRED' })
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
    throw new ApiError(503, 'Radio payments not configured', { code: 'NOT_CONFIGURED' })
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
 * The session fee, proved by `txHash`: a mined transfer of at least 5 USDC from `wallet` to the platform wallet.
 * A refusal is 402 `PAYMENT_REJECTED` with its `reason`; an unreachable chain 502.
 */
export async function verifySessionFee(client: Client, terms: ReturnType<typeof feeTerms>, wallet: Address, txHash: string, requestId?: string) {
  try {
    const verified: VerifiedTransfer = await verifyTransfer(client, {
      txHash,
      token: terms.token,
      recipient: terms.recipient,
      minAmount: terms.minAmount,
      payer: wallet,
    })
    return { ...verified, chainId: BASE_CHAIN_ID }
  } catch (e) {
    if (!(e instanceof TransferError)) throw e
    if (e.reason === 'unavailable') {
      log.error('radio.chain_read_failed', { requestId, what: 'payment' })
      throw chainUnavailable()
    }
    throw new ApiError(402, e.message, { code: 'PAYMENT_REJECTED', extra: { reason: e.reason } })
  }
}
