import { erc20Abi, formatUnits, getAddress, type Address } from 'viem'
import { getBalance, readContract } from 'viem/actions'
import { assertBaseChain, baseClient, BASE_CHAIN_ID } from '../../lib/chain'
import type { Config } from '../../lib/config'
import { deadline } from '../../lib/deadline'

/** A tracked asset's balance as the wallet routes answer it (spec "Wallet asset"). */
export interface WalletAsset {
  address: 'native' | Address
  name: string
  symbol: string
  decimals: number
  balance: string
  balanceRaw: string
  explorerUrl: string
}

export const EXPLORER = 'https://basescan.org'
export const CHAIN_NAME = 'base' as const
export const explorerAddressUrl = (address: string) => `${EXPLORER}/address/${address}`
export const explorerTokenUrl = (token: string, holder: string) => `${EXPLORER}/token/${token}?a=${holder}`

/**
 * The whole read gives up after this long (a hung RPC otherwise costs two 10 s attempts). Callers answer 500.
 */
export const BALANCE_TIMEOUT_MS = 8_000

export class ChainReadError extends Error {
  override name = 'ChainReadError'
}

/**
 * ETH then USDC (`PAYMENT_TOKEN_ADDRESS`, 6 decimals) held by `holder` on chain 8453, read in one batched JSON-RPC
 * request (chain check, `eth_getBalance`, `balanceOf`). Throws `ChainReadError` when the RPC fails, times out or
 * serves another chain.
 */
export async function readWalletAssets(config: Pick<Config, 'BASE_RPC_URL' | 'PAYMENT_TOKEN_ADDRESS'>, holder: Address): Promise<WalletAsset[]> {
  const client = baseClient(config)
  const token = getAddress(config.PAYMENT_TOKEN_ADDRESS)
  // viem's actions take no signal: the read is raced against the deadline, and left to end on its own.
  const bound = deadline(BALANCE_TIMEOUT_MS)
  const timedOut = new Promise<never>((_, reject) => {
    bound.signal.addEventListener('abort', () => reject(new ChainReadError(`no answer within ${BALANCE_TIMEOUT_MS} ms`)), { once: true })
  })
  // Started in the same tick, so the batching transport sends them as one HTTP request.
  const read = Promise.all([
    assertBaseChain(client, config.BASE_RPC_URL),
    getBalance(client, { address: holder }),
    readContract(client, { address: token, abi: erc20Abi, functionName: 'balanceOf', args: [holder] }),
  ])
  try {
    const [, wei, units] = await Promise.race([read, timedOut])
    return [
      asset('native', { name: 'Ether', symbol: 'ETH', decimals: 18 }, wei, explorerAddressUrl(holder)),
      asset(token, { name: 'USD Coin', symbol: 'USDC', decimals: 6 }, units, explorerTokenUrl(token, holder)),
    ]
  } catch (e) {
    read.catch(() => {}) // the race may have left it pending: its late failure is not unhandled
    // viem's short message only: its full message names the RPC URL, which may carry a key.
    throw e instanceof ChainReadError ? e : new ChainReadError((e as { shortMessage?: string }).shortMessage ?? (e instanceof Error ? e.name : 'RPC failed'))
  } finally {
    bound.clear()
  }
}

function asset(address: WalletAsset['address'], meta: { name: string; symbol: string; decimals: number }, raw: bigint, explorerUrl: string): WalletAsset {
  return { address, ...meta, balance: formatUnits(raw, meta.decimals), balanceRaw: raw.toString(), explorerUrl }
}

export { BASE_CHAIN_ID }
