import type { RouteHandler } from '@hono/zod-openapi'
import type { SignedInEnv } from '../../../lib/context'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { signedInRoute } from '../../../lib/http/routes'
import { jsonBody } from '../../../lib/http/validation'
import { CDP_SUPPORTED_CHAINS } from '../cdp'
import { createManagedWallet } from '../create-wallet'
import { CREATE_RESPONSES, CREATION_RULES } from '../creation-docs'
import { CreatedWalletSchema, CreateWalletBody } from '../schemas'

export const route = signedInRoute(
  limitedRoute(limits.wallet, {
    method: 'post',
    path: '/api/wallet/create',
    operationId: 'createManagedWallet',
    tags: ['Wallet'],
    summary: 'Create your managed (CDP) wallet',
    description:
      'Makes a new EVM account in the platform’s Coinbase Developer Platform project and stores it as your managed ' +
      'wallet: `walletAddress` its address, `walletId` its CDP account name, `networks` where it is used. `email` is ' +
      'required and checked as an address, but not sent or stored: a CDP server account has no owner email, and the ' +
      `wallet is always the signed-in caller's. ${CREATION_RULES}`,
    request: { body: jsonBody(CreateWalletBody) },
    responses: {
      201: ok(CreatedWalletSchema, 'Created'),
      400: errorResponse('`Email is required` or `Invalid email` (`VALIDATION`), malformed JSON (`INVALID_JSON`), or `Wallet already exists` (`WALLET_EXISTS`)'),
      ...CREATE_RESPONSES,
    },
  }),
)

export const handler: RouteHandler<typeof route, SignedInEnv> = async (c) => {
  c.req.valid('json') // `email` is checked only: the wallet is the signed-in caller's
  const wallet = await createManagedWallet(c)
  return c.json({ success: true as const, walletAddress: wallet.address, walletId: wallet.walletId, networks: [...CDP_SUPPORTED_CHAINS] }, 201)
}
