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
import { CdpWalletSchema, ImportCdpBody } from '../schemas'

export const route = signedInRoute(
  limitedRoute(limits.wallet, {
    method: 'post',
    path: '/api/wallet/cdp',
    operationId: 'createCdpWallet',
    tags: ['Wallet'],
    summary: 'Create (or import with `privateKey`) your managed CDP wallet',
    description:
      'The key, when given, is used for the CDP call only: never logged, stored or echoed (a malformed one is 400 ' +
      '`Invalid private key`, without the value). Without CDP configured: 500 `CDP not configured`; with CDP: 503 ' +
      '`NOT_IMPLEMENTED` for now (the CDP API calls are not available yet; nothing is created or faked). One managed ' +
      'wallet per user.',
    request: { body: jsonBody(ImportCdpBody) },
    responses: {
      201: ok(CdpWalletSchema, 'Created (once CDP creation is available)'),
      400: errorResponse('`Invalid private key` (`VALIDATION`), malformed JSON (`INVALID_JSON`), or `Wallet already exists` (`WALLET_EXISTS`)'),
      500: errorResponse('`CDP not configured` (`MISCONFIGURED`)'),
      503: errorResponse('`CDP wallet creation is not available yet` (`NOT_IMPLEMENTED`)'),
    },
  }),
)

export const handler: RouteHandler<typeof route, SignedInEnv> = async (c) => {
  c.req.valid('json') // validated (the key's shape) and otherwise unused until CDP import exists
  const [wallet] = await readAsUser(c, (db) => managedWalletQuery(db, c.var.user.id))
  return refuseManagedWalletCreation(c, wallet !== undefined)
}
