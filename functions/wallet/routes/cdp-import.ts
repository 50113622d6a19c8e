import type { RouteHandler } from '@hono/zod-openapi'
import type { SignedInEnv } from '../../../lib/context'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { signedInRoute } from '../../../lib/http/routes'
import { jsonBody } from '../../../lib/http/validation'
import { createManagedWallet } from '../create-wallet'
import { CREATE_RESPONSES, CREATION_RULES } from '../creation-docs'
import { CdpWalletSchema, ImportCdpBody } from '../schemas'

export const route = signedInRoute(
  limitedRoute(limits.wallet, {
    method: 'post',
    path: '/api/wallet/cdp',
    operationId: 'createCdpWallet',
    tags: ['Wallet'],
    summary: 'Create (or import with `privateKey`) your managed CDP wallet',
    description:
      'Without `privateKey`: as `POST /api/wallet/create`, a new CDP EVM account. With it: that key’s account is ' +
      'imported into CDP (`POST /v2/evm/accounts/import`): the key is encrypted to CDP’s published RSA key (RSA-OAEP, ' +
      'SHA-256) before it leaves this service, and is never logged, stored or echoed (a malformed or out-of-range key ' +
      'is 400 `Invalid private key`, without the value). When CDP already holds an account under your name (an ' +
      'earlier create or import whose answer was lost), that account is stored as your wallet and the answer is 400 ' +
      '`WALLET_EXISTS`: this request imported nothing (`get_seed` shows the address). A key whose account CDP ' +
      'already holds for someone else is refused ' +
      `(503 \`Wallet provider refused the request\`). ${CREATION_RULES}`,
    request: { body: jsonBody(ImportCdpBody) },
    responses: {
      201: ok(CdpWalletSchema, 'Created or imported: the account’s address and network'),
      400: errorResponse('`Invalid private key` (`VALIDATION`), malformed JSON (`INVALID_JSON`), or `Wallet already exists` (`WALLET_EXISTS`)'),
      ...CREATE_RESPONSES,
    },
  }),
)

export const handler: RouteHandler<typeof route, SignedInEnv> = async (c) => {
  const { privateKey } = c.req.valid('json')
  const wallet = await createManagedWallet(c, { privateKey })
  return c.json({ success: true as const, address: wallet.address, network: wallet.network }, 201)
}
