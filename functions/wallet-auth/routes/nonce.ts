import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import type { AppEnv } from '../../../lib/context'
import { noStore } from '../../../lib/http/no-store'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { limits } from '../../../lib/http/limits'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { issueNonce } from '../../../lib/auth/wallet-nonce'

const NonceResponse = z
  .object({ nonce: z.string().max(1024).openapi({ example: '3f1c9a0b7e2d4c6f8a1b2c3d4e5f6a7b' }) })
  .openapi('WalletNonce')

const spec = (method: 'get' | 'post') =>
  createRoute(limitedRoute(limits.walletNonce, {
    method,
    path: '/api/auth/nonce',
    operationId: method === 'get' ? 'getWalletNonce' : 'createWalletNonce',
    security: [],
    middleware: [noStore] as const,
    tags: ['Wallet auth'],
    summary: 'Issue a wallet sign-in (or wallet proof) nonce',
    description:
      'GET and POST answer alike: `{nonce}`, 32 alphanumeric characters for the `Nonce:` line of the message ' +
      'posted to `POST /api/wallet-auth`, or of a wallet proof (`POST /api/radio/streams`, `POST /api/wallet/sessions`). ' +
      'Single use (spent by the first attempt, even a failed one) and valid ' +
      'for 10 minutes. Not cached. 30 per minute per IP.',
    responses: {
      200: ok(NonceResponse),
      503: errorResponse('Nonce store not configured'),
    },
  }))

export const route = spec('get')
export const postRoute = spec('post')

export const handler: RouteHandler<typeof route | typeof postRoute, AppEnv> = async (c) => {
  const nonce = await issueNonce(c.var.services.kv)
  return c.json({ nonce }, 200)
}
