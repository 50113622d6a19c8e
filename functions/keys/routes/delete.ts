import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { and, eq } from 'drizzle-orm'
import { asUser } from '../../../lib/db/rls'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { apiKeys } from '../../../schema'
import { keyNotFound } from '../item'
import { KeyIdParams } from '../schemas'

export const route = signedInRoute({
  method: 'delete',
  path: '/api/keys/{id}',
  operationId: 'deleteApiKey',
  tags: ['API keys'],
  summary: 'Revoke one of the caller’s API keys',
  request: { params: KeyIdParams },
  responses: {
    200: ok(z.object({ success: z.literal(true), id: z.string().max(255) }).openapi('ApiKeyDeleted')),
    404: errorResponse('No such key, or not the caller’s'),
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const { id } = c.req.valid('param')
  const deleted = await asUser(c, (tx) =>
    tx.delete(apiKeys).where(and(eq(apiKeys.id, id), eq(apiKeys.userId, c.var.user.id))).returning({ id: apiKeys.id }),
  )
  if (deleted.length === 0) throw keyNotFound()
  return c.json({ success: true as const, id }, 200)
}
