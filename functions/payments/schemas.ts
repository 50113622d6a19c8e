import { z } from '@hono/zod-openapi'
import { formatUnits, getAddress } from 'viem'
import { walletProofFields } from '../../lib/http/fields'
import type { PaymentSettings } from './config'
import type { PaymentSession } from '../../lib/payments/sessions'
import { VOUCHER_DOMAIN, VOUCHER_HEADER } from '../../lib/payments/voucher'

const ADDRESS = /^0x[0-9a-fA-F]{40}$/
const usd = (description: string) => z.string().max(100).openapi({ description: `${description}, USD as a decimal string`, example: '4.99' })

export const OpenSessionBody = z
  .object({
    walletAddress: z.string({ error: 'walletAddress required' }).max(42).regex(ADDRESS, 'walletAddress must be a 0x-prefixed 40-hex-digit address'),
    txHash: z.string({ error: 'txHash required' }).max(66).regex(/^0x[0-9a-fA-F]{64}$/, 'txHash must be a 0x-prefixed 32-byte transaction hash'),
    ...walletProofFields('walletAddress'),
  })
  .openapi('OpenPaymentSessionRequest')

export const SessionIdParams = z.object({
  id: z.string().max(64).openapi({ param: { name: 'id', in: 'path' }, description: 'The payment session id' }),
})

export const WalletHeader = z.object({
  'x-wallet-address': z
    .string({ error: 'X-Wallet-Address required' })
    .max(42)
    .regex(ADDRESS, 'X-Wallet-Address must be a 0x-prefixed 40-hex-digit address')
    .openapi({ description: 'The wallet that opened the session (any case)' }),
})

export const PaymentSessionSchema = z
  .object({
    sessionId: z.string().max(64),
    walletAddress: z.string().max(42).openapi({ description: 'The wallet that deposited, checksummed (EIP-55)' }),
    deposit: usd('What the deposit put in (a card-funded session: all its top-ups)'),
    spent: usd('What calls have taken'),
    remaining: usd('What is left to spend: `deposit - spent`'),
    currency: z.string().max(16).openapi({ description: 'The token paid in, counted 1 token = 1 USD', example: 'USDC' }),
    chainId: z.number().int().min(1).max(2_147_483_647).openapi({ format: 'int32', example: 8453 }),
    token: z.string().max(42).openapi({ description: 'The ERC-20 deposited, checksummed' }),
    tokenDecimals: z.number().int().min(0).max(36).openapi({ format: 'int32', description: 'Voucher amounts are in base units: USD × 10^tokenDecimals' }),
    depositTxHash: z.string().max(66).nullable().openapi({ description: 'The deposit\'s transaction; null for a card-funded session' }),
    source: z.enum(['deposit', 'card']).openapi({
      description:
        '`deposit`: funded by one on-chain deposit (`POST /api/wallet/sessions`); `card`: the wallet\'s prepaid balance, funded by card top-ups ' +
        '(`GET /api/wallet/top-up`), 1 USD per 100 cents paid, one such session per wallet that each top-up adds to',
    }),
    lastNonce: z.string().max(80).nullable().openapi({ description: 'The highest voucher nonce the session accepted (decimal), null before the first' }),
    voucher: z
      .object({
        header: z.literal(VOUCHER_HEADER),
        primaryType: z.literal('Voucher'),
        domain: z.object({ name: z.literal(VOUCHER_DOMAIN.name), version: z.literal(VOUCHER_DOMAIN.version), chainId: z.literal(VOUCHER_DOMAIN.chainId) }),
      })
      .openapi({ description: 'How calls are paid from this session: the header and the EIP-712 domain of its vouchers' }),
    createdAt: z.string().max(64).openapi({ format: 'date-time' }),
    updatedAt: z.string().max(64).openapi({ format: 'date-time' }),
  })
  .openapi('PaymentSession')

const iso = (d: Date | string) => (d instanceof Date ? d : new Date(d)).toISOString()

/** A session as the routes answer it: base units as USD strings with the configured token's decimals. */
export function sessionJson(s: PaymentSession, settings: Pick<PaymentSettings, 'decimals' | 'currency'>): z.infer<typeof PaymentSessionSchema> {
  const deposit = BigInt(s.depositAmount)
  const spent = BigInt(s.spentAmount)
  const usdOf = (n: bigint) => formatUnits(n, settings.decimals)
  return {
    sessionId: s.id,
    walletAddress: getAddress(s.walletAddress),
    deposit: usdOf(deposit),
    spent: usdOf(spent),
    remaining: usdOf(deposit - spent),
    currency: settings.currency,
    chainId: s.chainId,
    token: getAddress(s.token),
    tokenDecimals: settings.decimals,
    depositTxHash: s.depositTxHash,
    source: s.source === 'card' ? 'card' : 'deposit',
    lastNonce: s.lastNonce ?? null,
    voucher: { header: VOUCHER_HEADER, primaryType: 'Voucher', domain: VOUCHER_DOMAIN },
    createdAt: iso(s.createdAt),
    updatedAt: iso(s.updatedAt),
  }
}

export const SESSION_NOT_FOUND = 'No such session for that wallet (`NOT_FOUND`): an unknown id and another wallet’s session answer alike'
