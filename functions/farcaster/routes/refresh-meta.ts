import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import type { AppEnv } from '../../../lib/context'
import { ok } from '../../../lib/http/openapi'
import { SESSION_TOKEN_TTL_SEC } from '../session-token'

export const route = createRoute({
  method: 'get',
  path: '/api/auth/farcaster/refresh',
  operationId: 'getFarcasterRefreshInfo',
  security: [],
  tags: ['Farcaster'],
  summary: 'How Farcaster session tokens are refreshed',
  responses: {
    200: ok(
      z
        .object({ method: z.literal('POST'), body: z.object({ sessionToken: z.string().max(8192) }), ttlSeconds: z.literal(SESSION_TOKEN_TTL_SEC), algorithm: z.literal('HMAC-SHA256') })
        .openapi('FarcasterRefreshMeta'),
    ),
  },
})

export const handler: RouteHandler<typeof route, AppEnv> = (c) =>
  c.json({ method: 'POST' as const, body: { sessionToken: 'string' }, ttlSeconds: SESSION_TOKEN_TTL_SEC, algorithm: 'HMAC-SHA256' as const }, 200)
