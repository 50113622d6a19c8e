import type { RouteHandler } from '@hono/zod-openapi'
import { and, eq } from 'drizzle-orm'
import { readAsUser } from '../../../lib/db/rls'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { apiKeys } from '../../../schema'
import { keyNotFound, toItem } from '../item'
import { ApiKeyItemSchema, KeyIdParams } from '../schemas'

export const route = signedInRoute({
  method: 'get',
  path: '/api/keys/{id}',
  operationId: 'getApiKey',
  tags: ['API keys'],
  summary: 'One of the caller’s API keys',
  request: { params: KeyIdParams },
  responses: {
    200: ok(ApiKeyItemSchema),
    404: errorResponse('No such key, or not the caller’s'),
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const { id } = c.req.valid('param')
  const [row] = await readAsUser(c, (tx) =>
    tx.select().from(apiKeys).where(and(eq(apiKeys.id, id), eq(apiKeys.userId, c.var.user.id))).limit(1),
  )
  if (!row) throw keyNotFound()
  return c.json(toItem(row), 200)
}
