import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { getAddress, type Address } from 'viem'
import { readSession } from '../../../lib/auth/session'
import type { AppContext, AppEnv } from '../../../lib/context'
import { noStore } from '../../../lib/http/no-store'
import { ApiError } from '../../../lib/http/errors'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { log, errorFields } from '../../../lib/log'
import { CHAIN_NAME, explorerAddressUrl, readWalletAssets } from '../balances'
import { AGENTIC_WALLET_FEATURES, cdpSettings } from '../cdp'
import { managedWalletQuery } from '../owned'
import { addressField, AgenticWalletSchema, ManagedWalletSchema, NoWalletSchema, WalletBalancesSchema } from '../schemas'

const Query = z.object({
  address: addressField('address').optional().openapi({ description: 'Any case; omit it for your own wallet (below)' }),
})

export const route = createRoute(
  limitedRoute(limits.wallet, {
    method: 'get',
    path: '/api/wallet',
    operationId: 'getWallet',
    security: [{}, { session: [] }] as { session?: string[] }[],
    middleware: [noStore] as const, // balances are read live, and the answer without `address` depends on the session
    tags: ['Wallet'],
    summary: 'Wallet balances by address, or your own wallet',
    description: [
      'With `address` (no session needed): its ETH and USDC (`PAYMENT_TOKEN_ADDRESS`) on Base (chain 8453), read ',
      'on chain in one batched RPC request. `assets` always lists ETH then USDC; `allTokens` only those with a ',
      'non-zero balance; balances are formatted in whole units (`balance`) and given in smallest units ',
      '(`balanceRaw`). The chain gets 8 s in all: a slow or down RPC is 500, never a hang. Not cached.\n\n',
      'Without `address`: when CDP (Coinbase Developer Platform) is configured, what agentic wallets offer here, ',
      'with no session needed; otherwise the signed-in caller’s managed wallet (`hasWallet: true`, its USDC ',
      '`balance`, null when the chain did not answer) or `{hasWallet: false, message}`; 401 without a session.',
    ].join(''),
    request: { query: Query },
    responses: {
      200: ok(z.union([WalletBalancesSchema, AgenticWalletSchema, ManagedWalletSchema, NoWalletSchema]), 'Balances, agentic wallet info, or your wallet'),
      400: errorResponse('`address` not a 0x-prefixed 40-hex-digit address (`VALIDATION`)'),
      401: errorResponse('No `address`, CDP not configured, and no session (`UNAUTHORIZED`)'),
      503: errorResponse('`Could not read balances from the chain` (`CHAIN_UNAVAILABLE`): the RPC failed or did not answer in time'),
    },
  }),
)

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { address } = c.req.valid('query')
  if (address !== undefined) return c.json(await balancesOf(c, getAddress(address)), 200)

  const { config } = c.var.services
  const cdp = cdpSettings(config)
  if (cdp) {
    return c.json(
      {
        agenticWallet: { status: 'configured' as const, projectId: cdp.projectId, features: [...AGENTIC_WALLET_FEATURES] },
        instructions:
          'Sign in, then create your managed wallet with POST /api/wallet {"action":"create"}. Read any address with ' +
          'GET /api/wallet?address=0x…, and top it up by card with GET /api/wallet/top-up?amount=1000&address=0x….',
      },
      200,
    )
  }
  const user = await readSession(c)
  if (!user) throw new ApiError('UNAUTHORIZED')
  const [wallet] = await c.var.services.reader.asUser(user.id, (db) => managedWalletQuery(db, user.id))
  if (!wallet) return c.json({ hasWallet: false as const, message: 'No managed wallet yet: create one with POST /api/wallet {"action":"create"}' }, 200)
  const holder = getAddress(wallet.address)
  const balance = await readWalletAssets(config, holder).then(
    (assets) => assets[1].balance,
    (e) => {
      log.warn('wallet.balance_unavailable', { requestId: c.var.requestId, ...errorFields(e) })
      return null
    },
  )
  return c.json({ hasWallet: true as const, address: holder, balance, network: wallet.network, createdAt: new Date(wallet.createdAt).toISOString() }, 200)
}

async function balancesOf(c: AppContext, holder: Address) {
  let assets
  try {
    assets = await readWalletAssets(c.var.services.config, holder)
  } catch (e) {
    log.error('wallet.balance_read_failed', { requestId: c.var.requestId, ...errorFields(e) })
    throw new ApiError('CHAIN_UNAVAILABLE', 'Could not read balances from the chain')
  }
  const [eth, usdc] = assets
  return {
    address: holder,
    chain: CHAIN_NAME,
    chainId: 8453 as const,
    testnet: false as const,
    explorerUrl: explorerAddressUrl(holder),
    nativeBalance: eth.balance,
    primaryToken: usdc,
    allTokens: assets.filter((a) => a.balanceRaw !== '0'),
    assets,
  }
}
