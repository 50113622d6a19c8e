import { z } from '@hono/zod-openapi'
import { emailField } from '../../lib/http/fields'

const ADDRESS = /^0x[0-9a-fA-F]{40}$/
export const INVALID_ADDRESS = 'Invalid address: expected a 0x-prefixed 40-hex-digit EVM address'

export const addressField = (name: string) =>
  z.string({ error: `${name} required` }).max(42, INVALID_ADDRESS).regex(ADDRESS, INVALID_ADDRESS)

const address = z.string().max(42).openapi({ description: 'Checksummed (EIP-55)', example: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' })
const url = z.string().max(2048)
const iso = z.string().max(64).openapi({ format: 'date-time' })

export const WalletAssetSchema = z
  .object({
    address: z.string().max(42).openapi({ description: '`native` for ETH, else the token contract (checksummed)' }),
    name: z.string().max(64),
    symbol: z.string().max(16),
    decimals: z.number().int().min(0).max(36).openapi({ format: 'int32' }),
    balance: z.string().max(100).openapi({ description: 'Formatted in whole units (`formatUnits`), e.g. `12.5`', example: '12.5' }),
    balanceRaw: z.string().max(80).openapi({ description: 'Smallest units, decimal string', example: '12500000' }),
    explorerUrl: url.openapi({ description: 'The holding on the block explorer (basescan)' }),
  })
  .openapi('WalletAsset')

export const WalletBalancesSchema = z
  .object({
    address,
    chain: z.literal('base'),
    chainId: z.literal(8453),
    testnet: z.literal(false),
    explorerUrl: url.openapi({ description: 'The address on basescan' }),
    nativeBalance: z.string().max(100).openapi({ description: 'ETH, formatted' }),
    primaryToken: WalletAssetSchema.openapi({ description: 'USDC (`PAYMENT_TOKEN_ADDRESS`)' }),
    allTokens: z.array(WalletAssetSchema).max(2).openapi({ description: 'The assets with a non-zero balance only' }),
    assets: z.array(WalletAssetSchema).max(2).openapi({ description: 'ETH then USDC, always both' }),
  })
  .openapi('WalletBalances')

export const AgenticWalletSchema = z
  .object({
    agenticWallet: z.object({
      status: z.literal('configured'),
      projectId: z.string().max(200).nullable().openapi({ description: '`CDP_PROJECT_ID`, null when unset' }),
      features: z.array(z.string().max(40)).max(10),
    }),
    instructions: z.string().max(1000),
  })
  .openapi('AgenticWalletInfo')

export const ManagedWalletSchema = z
  .object({
    hasWallet: z.literal(true),
    address,
    balance: z.string().max(100).nullable().openapi({ description: 'USDC, formatted; null when the chain did not answer' }),
    network: z.string().max(40),
    createdAt: iso,
  })
  .openapi('ManagedWallet')

export const NoWalletSchema = z.object({ hasWallet: z.literal(false), message: z.string().max(200) }).openapi('NoManagedWallet')

export const WalletAddressSchema = z
  .object({
    authenticated: z.literal(true),
    address: address.nullable(),
    message: z.string().max(200).optional().openapi({ description: 'Only when `address` is null' }),
    network: z.string().max(40),
    type: z.enum(['cdp', 'external']).nullable().openapi({ description: '`cdp` a managed wallet, `external` the wallet the user signed in with; null without one' }),
    source: z.enum(['managed', 'session']).nullable(),
  })
  .openapi('WalletAddress')

export const CreatedWalletSchema = z
  .object({ success: z.literal(true), walletAddress: address, walletId: z.string().max(200), networks: z.array(z.string().max(40)).max(10) })
  .openapi('CreatedWallet')

export const SeedMetadataSchema = z
  .object({
    hasWallet: z.literal(true),
    address,
    walletId: z.string().max(200),
    network: z.string().max(40),
    createdAt: iso,
    custody: z.literal('cdp').openapi({ description: 'The key material is held by the provider; this service never stores or shows it' }),
    exportable: z.literal(false),
  })
  .openapi('WalletSeedMetadata')

export const WalletActionBody = z
  .discriminatedUnion('action', [
    z.object({ action: z.literal('create') }),
    z.object({ action: z.literal('get_seed') }),
    z.object({ action: z.literal('export_seed') }),
  ])
  .openapi('WalletActionRequest')

export const CreateWalletBody = z.object({ email: emailField().openapi({ description: 'The wallet owner’s email (CDP account)' }) }).openapi('CreateWalletRequest')

/** The order of secp256k1: a private key is a number from 1 to one less than this. */
const SECP256K1_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
const INVALID_PRIVATE_KEY = 'Invalid private key'
const PRIVATE_KEY = /^(0x)?[0-9a-fA-F]{64}$/

export const ImportCdpBody = z
  .object({
    privateKey: z
      .string()
      .max(66, INVALID_PRIVATE_KEY)
      .regex(PRIVATE_KEY, INVALID_PRIVATE_KEY)
      .refine((key) => {
        if (!PRIVATE_KEY.test(key)) return true // the regex has said so
        const n = BigInt(`0x${key.replace(/^0x/, '')}`)
        return n > 0n && n < SECP256K1_ORDER
      }, INVALID_PRIVATE_KEY)
      .transform((key) => `0x${key.replace(/^0x/, '').toLowerCase()}` as `0x${string}`)
      .optional()
      .openapi({
        // the transform hides the string's own bounds from the document: stated here
        type: 'string',
        maxLength: 66,
        pattern: PRIVATE_KEY.source,
        description: 'A secp256k1 private key (32 bytes, hex, `0x` optional) to import; sent to CDP encrypted, never logged, stored or echoed',
      }),
  })
  .openapi('CdpWalletRequest')

export const CdpStatusSchema = z
  .object({ status: z.enum(['configured', 'not_configured']), type: z.literal('cdp'), supportedChains: z.array(z.string().max(40)).max(10) })
  .openapi('CdpStatus')

export const CdpWalletSchema = z.object({ success: z.literal(true), address, network: z.string().max(40) }).openapi('CdpWallet')

export const TopUpSchema = z
  .object({
    url: url.openapi({ description: 'The Stripe Checkout page: send the browser there' }),
    amount: z.number().int().min(500).max(5000).openapi({ format: 'int32', description: 'USD cents' }),
    address,
  })
  .openapi('WalletTopUp')

const usd = (description: string) => z.string().max(100).openapi({ description: `${description}, USD as a decimal string`, example: '10' })

export const TopUpsSchema = z
  .object({
    balances: z
      .array(
        z.object({
          sessionId: z.string().max(64).openapi({ description: 'The card-funded payment session: pay gateway calls from it with `X-Payment-Method: session`' }),
          address,
          deposit: usd('All its top-ups'),
          spent: usd('What gateway calls have taken'),
          remaining: usd('What is left to spend'),
          currency: z.string().max(16).openapi({ example: 'USDC' }),
        }),
      )
      .max(100)
      .openapi({ description: 'The prepaid gateway balance of each wallet you topped up' }),
    topUps: z
      .array(
        z.object({
          paymentId: z.string().max(255).openapi({ description: 'The Stripe Checkout Session' }),
          address,
          amount: z.number().int().min(0).max(1_000_000).openapi({ format: 'int32', description: 'USD cents paid' }),
          sessionId: z.string().max(64),
          createdAt: iso,
        }),
      )
      .max(100)
      .openapi({ description: 'Your paid top-ups, newest first (the latest 100)' }),
  })
  .openapi('WalletTopUps')
