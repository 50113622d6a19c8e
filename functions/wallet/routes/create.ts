import type { RouteHandler } from '@hono/zod-openapi'
import type { SignedInEnv } from '../../../lib/context'
import { readAsUser } from '../../../lib/db/rls'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { signedInRoute } from '../../../lib/http/routes'
import { jsonBody } from '../../../lib/http/validation'
import { managedWalletQuery } from '../owned'
import { refuseManagedWalletCreation } from '../create-wallet'
import { CreatedWalletSchema, CreateWalletBody } from '../schemas'

export const route = signedInRoute(
  limitedRoute(limits.wallet, {
    method: 'post',
    path: '/api/wallet/create',
    operationId: 'createManagedWallet',
    tags: ['Wallet'],
    summary: 'Create your managed (CDP) wallet',
    description:
      'One managed wallet per user, for `email`. Without CDP configured: 500 `CDP not configured`. With CDP ' +
      'configured: 503 `NOT_IMPLEMENTED` for now (creation through the CDP API is not available yet; nothing is ' +
      'created or faked). Once available it answers 201 `{success, walletAddress, walletId, networks}`.',
    request: { body: jsonBody(CreateWalletBody) },
    responses: {
      201: ok(CreatedWalletSchema, 'Created'),
      400: errorResponse('`Email is required` or `Invalid email` (`VALIDATION`), malformed JSON (`INVALID_JSON`), or `Wallet already exists` (`WALLET_EXISTS`)'),
      500: errorResponse('`CDP not configured` (`MISCONFIGURED`)'),
      503: errorResponse('`CDP wallet creation is not available yet` (`NOT_IMPLEMENTED`)'),
    },
  }),
)

export const handler: RouteHandler<typeof route, SignedInEnv> = async (c) => {
  const [wallet] = await readAsUser(c, (db) => managedWalletQuery(db, c.var.user.id))
  return refuseManagedWalletCreation(c, wallet !== undefined)
}
