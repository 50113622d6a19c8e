import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { and, eq } from 'drizzle-orm'
import { requireSession } from '../../../lib/auth/session'
import type { AppEnv } from '../../../lib/context'
import { asUser } from '../../../lib/db/rls'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { apiKeys } from '../../../schema'
import { keyNotFound } from '../item'
import { KeyIdParams } from '../schemas'

export const route = createRoute({
  method: 'delete',
  path: '/api/keys/{id}',
  tags: ['API keys'],
  summary: 'Revoke one of the caller’s API keys',
  middleware: [requireSession] as const,
  security: [{ session: [] }],
  request: { params: KeyIdParams },
  responses: {
    200: ok(z.object({ success: z.literal(true), id: z.string() }).openapi('ApiKeyDeleted')),
    401: errorResponse('No session'),
    403: errorResponse('Foreign `Origin` (`ORIGIN_NOT_ALLOWED`)'),
    404: errorResponse('No such key, or not the caller’s'),
    500: errorResponse('Internal server error'),
  },
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { id } = c.req.valid('param')
  const deleted = await asUser(c, (tx) =>
    tx.delete(apiKeys).where(and(eq(apiKeys.id, id), eq(apiKeys.userId, c.var.user!.id))).returning({ id: apiKeys.id }),
  )
  if (deleted.length === 0) throw keyNotFound()
  return c.json({ success: true as const, id }, 200)
}
