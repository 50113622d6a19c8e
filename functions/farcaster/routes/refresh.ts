import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { eq } from 'drizzle-orm'
import type { AppEnv } from '../../../lib/context'
import { asService } from '../../../lib/db/rls'
import { ApiError } from '../../../lib/http/errors'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { jsonBody } from '../../../lib/http/validation'
import { users } from '../../../schema'
import { issueSessionToken, readSessionToken, sessionTokenSecret } from '../session-token'

const required = 'Session token required'
const RefreshBody = z
  .object({ sessionToken: z.string({ error: required }).min(1, required).max(4096, 'Invalid session token') })
  .openapi('FarcasterRefreshRequest')

export const route = createRoute({
  method: 'post',
  path: '/api/auth/farcaster/refresh',
  operationId: 'refreshFarcasterSession',
  security: [],
  tags: ['Farcaster'],
  summary: 'Re-sign a Farcaster session token',
  description:
    'A correctly signed (compared in constant time), unexpired `sessionToken` whose user still exists is ' +
    're-signed with a fresh 7-day `exp`. Anything else is 401 `Invalid session token`. The secret is ' +
    'FARCASTER_SESSION_SECRET, else NEXTAUTH_SECRET; in production without either, 500; elsewhere a random ' +
    'per-process secret (tokens then die with the process).',
  request: { body: jsonBody(RefreshBody) },
  responses: {
    200: ok(z.object({ sessionToken: z.string().max(8192), expiresAt: z.string().max(64) }).openapi('FarcasterRefreshResponse')),
    400: errorResponse('Session token required'),
    401: errorResponse('Invalid session token'),
    500: errorResponse('Farcaster session secret not configured (production)'),
  },
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { sessionToken } = c.req.valid('json')
  const { config } = c.var.services
  const secret = sessionTokenSecret(config)
  const data = await readSessionToken(secret, sessionToken)
  if (!data) throw new ApiError('INVALID_TOKEN', 'Invalid session token')
  // A deleted account's token must not live on through refreshes. (`db` is opened only now, when needed.)
  const [user] = await asService(c.var.services.db, 'farcasterRefresh', (tx) =>
    tx.select({ id: users.id }).from(users).where(eq(users.id, data.userId)),
  )
  if (!user) throw new ApiError('INVALID_TOKEN', 'Invalid session token')
  const issued = await issueSessionToken(secret, { fid: data.fid, userId: data.userId })
  return c.json({ sessionToken: issued.sessionToken, expiresAt: issued.expiresAt }, 200)
}
