import type { RouteHandler } from '@hono/zod-openapi'
import { getAddress } from 'viem'
import type { SignedInEnv } from '../../../lib/context'
import { ApiError } from '../../../lib/http/errors'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { signedInRoute } from '../../../lib/http/routes'
import { jsonBody } from '../../../lib/http/validation'
import { readAsUser } from '../../../lib/db/rls'
import { managedWalletQuery } from '../owned'
import { refuseManagedWalletCreation } from '../create-wallet'
import { SeedMetadataSchema, WalletActionBody, CreatedWalletSchema } from '../schemas'

export const route = signedInRoute(
  limitedRoute(limits.wallet, {
    method: 'post',
    path: '/api/wallet',
    operationId: 'walletAction',
    tags: ['Wallet'],
    summary: 'Act on your managed wallet',
    description: [
      '`action`: `create` makes your managed (CDP) wallet, one per user (400 `WALLET_EXISTS` if you have one; 500 ',
      '`CDP not configured` without CDP; with CDP configured, 503 `NOT_IMPLEMENTED` for now: creation through the ',
      'CDP API is not available yet and nothing is faked). `get_seed` answers the wallet’s metadata only: the key ',
      'material stays with the provider and is never shown (404 without a wallet). `export_seed` is always 403.',
    ].join(''),
    request: { body: jsonBody(WalletActionBody) },
    responses: {
      200: ok(SeedMetadataSchema, '`get_seed`: the wallet’s metadata'),
      201: ok(CreatedWalletSchema, '`create`: the new wallet (once CDP creation is available)'),
      400: errorResponse('`Invalid action` (`INVALID_ACTION`), a malformed body (`VALIDATION`, `INVALID_JSON`), or `Wallet already exists` (`WALLET_EXISTS`)'),
      403: errorResponse('`Seed export is disabled` (`FORBIDDEN`) for `export_seed`; or a foreign `Origin` (`ORIGIN_NOT_ALLOWED`)'),
      404: errorResponse('`No wallet found` (`NOT_FOUND`) for `get_seed`'),
      500: errorResponse('`CDP not configured` (`MISCONFIGURED`) for `create`'),
      503: errorResponse('`CDP wallet creation is not available yet` (`NOT_IMPLEMENTED`) for `create`'),
    },
  }),
)

export const handler: RouteHandler<typeof route, SignedInEnv> = async (c) => {
  const { action } = c.req.valid('json')
  if (action === 'export_seed') throw new ApiError('FORBIDDEN', 'Seed export is disabled')
  const [wallet] = await readAsUser(c, (db) => managedWalletQuery(db, c.var.user.id))
  if (action === 'create') return refuseManagedWalletCreation(c, wallet !== undefined)
  if (!wallet) throw new ApiError('NOT_FOUND', 'No wallet found')
  return c.json(
    {
      hasWallet: true as const,
      address: getAddress(wallet.address),
      walletId: wallet.walletId,
      network: wallet.network,
      createdAt: new Date(wallet.createdAt).toISOString(),
      custody: 'cdp' as const,
      exportable: false as const,
    },
    200,
  )
}
