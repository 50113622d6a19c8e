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
import { CDP_SUPPORTED_CHAINS } from '../cdp'
import { createManagedWallet } from '../create-wallet'
import { CREATE_RESPONSES, CREATION_RULES } from '../creation-docs'
import { SeedMetadataSchema, WalletActionBody, CreatedWalletSchema } from '../schemas'

export const route = signedInRoute(
  limitedRoute(limits.wallet, {
    method: 'post',
    path: '/api/wallet',
    operationId: 'walletAction',
    tags: ['Wallet'],
    summary: 'Act on your managed wallet',
    description: [
      '`action`: `create` makes your managed (CDP) wallet, as `POST /api/wallet/create` does, and answers 201 as it ',
      'does (400 `WALLET_EXISTS` if you have one). `get_seed` answers the wallet’s metadata only: the key material ',
      'stays with the provider and is never shown (404 without a wallet). `export_seed` is always 403. ',
      CREATION_RULES,
    ].join(''),
    request: { body: jsonBody(WalletActionBody) },
    responses: {
      200: ok(SeedMetadataSchema, '`get_seed`: the wallet’s metadata'),
      201: ok(CreatedWalletSchema, '`create`: the new wallet'),
      400: errorResponse('`Invalid action` (`INVALID_ACTION`), a malformed body (`VALIDATION`, `INVALID_JSON`), or `Wallet already exists` (`WALLET_EXISTS`)'),
      403: errorResponse('`Seed export is disabled` (`FORBIDDEN`) for `export_seed`; or a foreign `Origin` (`ORIGIN_NOT_ALLOWED`)'),
      404: errorResponse('`No wallet found` (`NOT_FOUND`) for `get_seed`'),
      ...CREATE_RESPONSES,
    },
  }),
)

export const handler: RouteHandler<typeof route, SignedInEnv> = async (c) => {
  const { action } = c.req.valid('json')
  if (action === 'export_seed') throw new ApiError('FORBIDDEN', 'Seed export is disabled')
  if (action === 'create') {
    const created = await createManagedWallet(c)
    return c.json({ success: true as const, walletAddress: created.address, walletId: created.walletId, networks: [...CDP_SUPPORTED_CHAINS] }, 201)
  }
  const [wallet] = await readAsUser(c, (db) => managedWalletQuery(db, c.var.user.id))
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
