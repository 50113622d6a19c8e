import type { RouteHandler } from '@hono/zod-openapi'
import { getAddress } from 'viem'
import type { SignedInEnv } from '../../../lib/context'
import { readAsUser } from '../../../lib/db/rls'
import { ApiError } from '../../../lib/http/errors'
import { unavailableDependency } from '../../../lib/http/dependency'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { signedInRoute } from '../../../lib/http/routes'
import { errorFields, log } from '../../../lib/log'
import { CHAIN_NAME } from '../balances'
import { walletSourcesQuery } from '../owned'
import { WalletAddressSchema } from '../schemas'

export const route = signedInRoute(
  limitedRoute(limits.wallet, {
    method: 'get',
    path: '/api/wallet/address',
    operationId: 'getWalletAddress',
    tags: ['Wallet'],
    summary: 'Your wallet address',
    description:
      'Your managed wallet (`source: managed`, `type: cdp`) when you have one, else the wallet you signed in with ' +
      '(`source: session`, `type: external`: the first one linked by wallet sign-in), else `address: null` with a ' +
      '`message` (`type` and `source` null). Not cached.',
    responses: {
      200: ok(WalletAddressSchema),
      500: errorResponse('`Failed to get wallet address` (`INTERNAL`): the database did not answer'),
    },
  }),
)

export const handler: RouteHandler<typeof route, SignedInEnv> = async (c) => {
  let row
  try {
    ;[row] = await readAsUser(c, (db) => walletSourcesQuery(db, c.var.user.id))
  } catch (e) {
    if (unavailableDependency(e)) throw e
    log.error('wallet.address_read_failed', { requestId: c.var.requestId, ...errorFields(e) })
    throw new ApiError('INTERNAL', 'Failed to get wallet address')
  }
  if (row?.managedAddress) {
    return c.json({ authenticated: true as const, address: getAddress(row.managedAddress), network: row.managedNetwork ?? CHAIN_NAME, type: 'cdp' as const, source: 'managed' as const }, 200)
  }
  if (row?.signInSubject) {
    return c.json({ authenticated: true as const, address: getAddress(row.signInSubject), network: CHAIN_NAME, type: 'external' as const, source: 'session' as const }, 200)
  }
  return c.json({ authenticated: true as const, address: null, message: 'No wallet: create a managed wallet or sign in with a wallet', network: CHAIN_NAME, type: null, source: null }, 200)
}
