import { erc20Abi, formatUnits, getAddress, isAddress, parseUnits, type Address } from 'viem'
import type { Config } from '../../lib/config'
import { ApiError } from '../../lib/http/errors'
import { assertBaseChain, BASE_CHAIN_ID, baseClient, publicRpcEndpoint } from '../../lib/chain'
import { errorFields, log } from '../../lib/log'
import { readContract } from 'viem/actions'

export const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/
// TOKEN_GATE_MIN_BALANCE is in token units (e.g. "1" or "0.5"), scaled by the token's decimals().
const DECIMAL_RE = /^\d+(\.\d+)?$/

export interface GateSettings {
  contractAddress: Address
  minBalance: string
  rpcUrl: string
  rpcEndpoint: string | null
}

/**
 * The gate as configured: null when TOKEN_GATE_CONTRACT is unset. A malformed contract or minimum is 503
 * (logged), never "no gate": an operator who set a gate must not have it silently open.
 */
export function gateSettings(config: Config): GateSettings | null {
  const contract = config.TOKEN_GATE_CONTRACT?.trim()
  if (!contract) return null
  const minBalance = config.TOKEN_GATE_MIN_BALANCE.trim()
  if (!isAddress(contract, { strict: false }) || !DECIMAL_RE.test(minBalance)) {
    log.error('farcaster.token_gate_misconfigured', { note: 'TOKEN_GATE_CONTRACT must be an address and TOKEN_GATE_MIN_BALANCE a decimal number' })
    throw new ApiError('NOT_CONFIGURED', 'Token gating not configured')
  }
  const rpcUrl = config.BASE_RPC_URL
  return { contractAddress: getAddress(contract), minBalance, rpcUrl, rpcEndpoint: publicRpcEndpoint(rpcUrl) }
}

export function requireGate(config: Config) {
  const gate = gateSettings(config)
  if (!gate) throw new ApiError('NOT_CONFIGURED', 'Token gating not configured')
  return gate
}

export interface GateResult {
  address: Address
  hasAccess: boolean
  balance: string
  balanceRaw: string
  minBalance: string
  decimals: number
  contractAddress: Address
  rpcEndpoint: string | null
  chainId: typeof BASE_CHAIN_ID
}

/** ERC-20 `balanceOf(address)` ≥ the minimum (inclusive). Any RPC or contract failure is 502 `Chain unavailable`. */
export async function checkHolding(gate: GateSettings, address: string, requestId?: string): Promise<GateResult> {
  const holder = getAddress(address.toLowerCase()) // any case accepted; answered checksummed
  const client = baseClient({ BASE_RPC_URL: gate.rpcUrl })
  let raw: bigint
  let decimals: number
  try {
    await assertBaseChain(client, gate.rpcUrl)
    const token = { address: gate.contractAddress, abi: erc20Abi } as const
    ;[raw, decimals] = await Promise.all([
      readContract(client, { ...token, functionName: 'balanceOf', args: [holder] }),
      readContract(client, { ...token, functionName: 'decimals' }),
    ])
  } catch (e) {
    log.error('farcaster.token_gate_chain_read_failed', { requestId, ...errorFields(e) })
    throw new ApiError('CHAIN_UNAVAILABLE')
  }
  const min = parseUnits(gate.minBalance, decimals)
  return {
    address: holder,
    hasAccess: raw >= min,
    balance: formatUnits(raw, decimals),
    balanceRaw: raw.toString(),
    minBalance: gate.minBalance,
    decimals,
    contractAddress: gate.contractAddress,
    rpcEndpoint: gate.rpcEndpoint,
    chainId: BASE_CHAIN_ID,
  }
}

/** The gate settings as configured (a malformed one shows as enabled: POST then answers 503). */
export function tokenGatingMeta(config: Config) {
  const contract = config.TOKEN_GATE_CONTRACT?.trim()
  return {
    enabled: Boolean(contract),
    contractAddress: contract ? (isAddress(contract, { strict: false }) ? getAddress(contract) : contract) : null,
    minBalance: contract ? config.TOKEN_GATE_MIN_BALANCE.trim() : null,
    rpcEndpoint: publicRpcEndpoint(config.BASE_RPC_URL),
    chainId: BASE_CHAIN_ID,
  }
}
