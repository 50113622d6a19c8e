import { z } from '@hono/zod-openapi'
import { BASE_CHAIN_ID } from '../../lib/chain'
import { ADDRESS_RE } from './token-gate'

export const AddressField = z
  .string({ error: 'Invalid address' })
  .regex(ADDRESS_RE, 'Invalid address')
  .openapi({ example: '0x1111111111111111111111111111111111111111', description: '`0x` + 40 hex characters, any case' })

export const TokenGateResultSchema = z
  .object({
    address: z.string().describe('The holder, checksummed'),
    hasAccess: z.boolean().describe('`balance` ≥ `minBalance`'),
    balance: z.string().describe('Token units (scaled by `decimals`), decimal string'),
    balanceRaw: z.string().describe('Base units, integer string'),
    minBalance: z.string().describe('TOKEN_GATE_MIN_BALANCE, in token units'),
    decimals: z.number().int(),
    contractAddress: z.string().describe('TOKEN_GATE_CONTRACT, checksummed'),
    rpcEndpoint: z.string().nullable().describe('BASE_RPC_URL, origin only (credentials, path and query stripped)'),
    chainId: z.literal(BASE_CHAIN_ID),
  })
  .openapi('TokenGateResult')

export const TokenGatingMetaSchema = z
  .object({
    enabled: z.boolean().describe('TOKEN_GATE_CONTRACT is set'),
    contractAddress: z.string().nullable(),
    minBalance: z.string().nullable(),
    rpcEndpoint: z.string().nullable(),
    chainId: z.literal(BASE_CHAIN_ID),
  })
  .openapi('TokenGatingMeta')
