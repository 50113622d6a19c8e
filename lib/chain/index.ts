import { createPublicClient, http } from 'viem'
import { base } from 'viem/chains'
import type { Config } from '../config'

/** Chain ids the platform signs users in on. Tempo has no RPC dependency here (EOA recovery only). */
export const BASE_CHAIN_ID = base.id // 8453
export const TEMPO_CHAIN_ID = 4217

/**
 * A read-only client for Base at `BASE_RPC_URL`: ERC-1271 / ERC-6492 signature checks, balances.
 * One per request (no module-global sockets on Workers); a single retry keeps a dead RPC from stalling a request.
 */
export const baseClient = (config: Pick<Config, 'BASE_RPC_URL'>) =>
  createPublicClient({ chain: base, transport: http(config.BASE_RPC_URL, { retryCount: 1, timeout: 10_000 }) })
