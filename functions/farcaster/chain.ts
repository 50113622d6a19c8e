import { createPublicClient, http } from 'viem'
import { base } from 'viem/chains'

export const BASE_CHAIN_ID = base.id // 8453

/**
 * A read-only client for chain 8453 at `rpcUrl`, made per request: a client shared across requests could
 * batch two requests' calls into one fetch, which workerd refuses. JSON-RPC batching sends balanceOf +
 * decimals as one HTTP request; one retry for a flaky provider.
 */
export const baseClient = (rpcUrl: string) =>
  createPublicClient({ chain: base, transport: http(rpcUrl, { batch: true, retryCount: 1, timeout: 8_000 }) })

// URLs already seen serving chain 8453 (plain strings: safe to keep across requests).
const checkedChain = new Set<string>()

/**
 * Throws unless the endpoint really serves chain 8453: a mis-pointed BASE_RPC_URL would otherwise answer
 * balances from another chain. Checked once per URL per isolate; a failure is not remembered.
 */
export async function assertBaseChain(client: ReturnType<typeof baseClient>, rpcUrl: string) {
  if (checkedChain.has(rpcUrl)) return
  const id = await client.getChainId()
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
