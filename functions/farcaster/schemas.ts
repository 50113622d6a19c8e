import { z } from '@hono/zod-openapi'
import { BASE_CHAIN_ID } from '../../lib/chain'
import { ADDRESS_RE } from './token-gate'

export const AddressField = z
  .string({ error: 'Invalid address' })
  .max(42, 'Invalid address')
  .regex(ADDRESS_RE, 'Invalid address')
  .openapi({ example: '0x1111111111111111111111111111111111111111', description: '`0x` + 40 hex characters, any case' })

export const TokenGateResultSchema = z
  .object({
    address: z.string().max(42).describe('The holder, checksummed'),
    hasAccess: z.boolean().describe('`balance` ≥ `minBalance`'),
    balance: z.string().max(1024).describe('Token units (scaled by `decimals`), decimal string'),
    balanceRaw: z.string().max(1024).describe('Base units, integer string'),
    minBalance: z.string().max(1024).describe('TOKEN_GATE_MIN_BALANCE, in token units'),
    decimals: z.number().int().min(0).max(255).openapi({ format: 'int32' }), // ERC-20 decimals are a uint8
    contractAddress: z.string().max(1024).describe('TOKEN_GATE_CONTRACT, checksummed'),
    rpcEndpoint: z.string().max(2048).nullable().describe('BASE_RPC_URL, origin only (credentials, path and query stripped)'),
    chainId: z.literal(BASE_CHAIN_ID),
  })
  .openapi('TokenGateResult')

export const TokenGatingMetaSchema = z
  .object({
    enabled: z.boolean().describe('TOKEN_GATE_CONTRACT is set'),
    contractAddress: z.string().max(1024).nullable(),
    minBalance: z.string().max(1024).nullable(),
    rpcEndpoint: z.string().max(2048).nullable(),
    chainId: z.literal(BASE_CHAIN_ID),
  })
  .openapi('TokenGatingMeta')
