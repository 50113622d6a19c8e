import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { desc, eq } from 'drizzle-orm'
import { requireSharedKey } from '../../../lib/auth/shared-key'
import type { AppEnv } from '../../../lib/context'
import { withUser } from '../../../lib/db/rls'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { limits } from '../../../lib/http/limits'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { installations } from '../../../schema'

const Query = z.object({
  userId: z
    .string({ error: 'userId required' }).max(255)
    .trim()
    .min(1, 'userId required')
    .openapi({ param: { name: 'userId', in: 'query' }, description: 'The user whose gateway token to read' }),
})

export const route = createRoute(limitedRoute(limits.backend, {
  method: 'get',
  path: '/api/registration/token',
  operationId: 'getRegistrationToken',
  tags: ['Installations'],
  summary: "A user's runtime gateway token (internal)",
  description:
    "The `gatewayToken` of the user's most recently seen installation; null when they have none or it has no token. " +
    'Internal: requires the shared key, so a gateway token is never public.',
  middleware: [requireSharedKey],
  security: [{ sharedKey: [] }],
  request: { query: Query },
  responses: {
    200: ok(z.object({ gateway_token: z.string().max(8192).nullable() }).openapi('RegistrationToken')),
    400: errorResponse('`userId required` (`VALIDATION`)'),
    401: errorResponse('`Unauthorized`: no Bearer token'),
    403: errorResponse('`Forbidden`: not the shared key'),
    500: errorResponse('`Server misconfigured` (`INTERNAL_API_KEY` unset) or internal server error'),
  },
}))

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { userId } = c.req.valid('query')
  const [latest] = await withUser(c.var.services.db, userId, (tx) =>
    tx
      .select({ gatewayToken: installations.gatewayToken })
      .from(installations)
      .where(eq(installations.userId, userId))
      .orderBy(desc(installations.lastSeen), desc(installations.registeredAt))
      .limit(1),
  )
  return c.json({ gateway_token: latest?.gatewayToken ?? null }, 200)
}
