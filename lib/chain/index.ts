import { createClient, http } from 'viem'
import { getChainId } from 'viem/actions'
import { base } from 'viem/chains'
import type { Config } from '../config'

/** Chain ids the platform signs users in on. Tempo has no RPC dependency here (EOA recovery only). */
export const BASE_CHAIN_ID = base.id // 8453
export const TEMPO_CHAIN_ID = 4217

/**
 * A read-only client for Base at `BASE_RPC_URL`: ERC-1271 / ERC-6492 signature checks, balances. Made per
 * request: a client shared across requests could batch two requests' calls into one fetch, which workerd
 * refuses. JSON-RPC batching sends e.g. balanceOf + decimals as one HTTP request; one retry for a flaky provider.
 * A bare client: callers import the actions they use from `viem/actions`, so a bundle carries only those.
 */
export const baseClient = (config: Pick<Config, 'BASE_RPC_URL'> & Partial<Pick<Config, 'BASE_RPC_TIMEOUT_MS'>>) =>
  createClient({ chain: base, transport: http(config.BASE_RPC_URL, { batch: true, retryCount: 1, timeout: config.BASE_RPC_TIMEOUT_MS ?? 10_000 }) })

// URLs already seen serving chain 8453 (plain strings: safe to keep across requests).
const checkedChain = new Set<string>()

/**
 * Throws unless the endpoint really serves chain 8453: a mis-pointed BASE_RPC_URL would otherwise answer
 * balances from another chain. Checked once per URL per isolate; a failure is not remembered.
 */
export async function assertBaseChain(client: ReturnType<typeof baseClient>, rpcUrl: string) {
  if (checkedChain.has(rpcUrl)) return
  const id = await getChainId(client)
  if (id !== BASE_CHAIN_ID) throw new Error(`BASE_RPC_URL serves chain ${id}, not ${BASE_CHAIN_ID}`)
  checkedChain.add(rpcUrl)
}

/** The RPC endpoint as responses may show it: origin only, so a key in the userinfo, path or query never leaks. */
export function publicRpcEndpoint(rpcUrl: string) {
  try {
    return new URL(rpcUrl).origin
  } catch {
    return null
  }
}
