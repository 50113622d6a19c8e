import { createRoute } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import type { AppEnv } from '../../../lib/context'
import { noStore } from '../../../lib/http/no-store'
import { ApiError } from '../../../lib/http/errors'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { findSession } from '../../../lib/payments/sessions'
import { PaymentSessionSchema, SESSION_NOT_FOUND, SessionIdParams, sessionJson, WalletHeader } from '../schemas'

export const route = createRoute(limitedRoute(limits.paymentSessionRead, {
  method: 'get',
  path: '/api/wallet/sessions/{id}',
  operationId: 'getPaymentSession',
  security: [],
  middleware: [noStore] as const,
  tags: ['Payment sessions'],
  summary: 'A payment session’s balance',
  description:
    'The session as `POST /api/wallet/sessions` answered it, with what calls have spent since and `lastNonce`, ' +
    'the highest voucher nonce taken (sign the next voucher with a higher one). `X-Wallet-Address` must name the ' +
    'wallet that opened it: another wallet, like an unknown id, is 404. Not cached.',
  request: { params: SessionIdParams, headers: WalletHeader },
  responses: {
    200: ok(PaymentSessionSchema),
    400: errorResponse('`X-Wallet-Address` missing or not an address (`VALIDATION`)'),
    404: errorResponse(SESSION_NOT_FOUND),
  },
}))

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { services } = c.var
  const session = await findSession(services.reader, c.req.valid('param').id, c.req.valid('header')['x-wallet-address'])
  if (!session) throw new ApiError('NOT_FOUND', 'Payment session not found')
  const { PAYMENT_TOKEN_DECIMALS: decimals, PAYMENT_CURRENCY: currency } = services.config
  return c.json(sessionJson(session, { decimals, currency }), 200)
}
