import { createRoute } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { and, eq } from 'drizzle-orm'
import { requireSession } from '../../../lib/auth/session'
import type { AppEnv } from '../../../lib/context'
import { readAsUser } from '../../../lib/db/rls'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { apiKeys } from '../../../schema'
import { keyNotFound, toItem } from '../item'
import { ApiKeyItemSchema, KeyIdParams } from '../schemas'

export const route = createRoute({
  method: 'get',
  path: '/api/keys/{id}',
  tags: ['API keys'],
  summary: 'One of the caller’s API keys',
  middleware: [requireSession] as const,
  security: [{ session: [] }],
  request: { params: KeyIdParams },
  responses: {
    200: ok(ApiKeyItemSchema),
    401: errorResponse('No session'),
    404: errorResponse('No such key, or not the caller’s'),
    500: errorResponse('Internal server error'),
  },
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { id } = c.req.valid('param')
  const [row] = await readAsUser(c, (tx) =>
    tx.select().from(apiKeys).where(and(eq(apiKeys.id, id), eq(apiKeys.userId, c.var.user!.id))).limit(1),
  )
  if (!row) throw keyNotFound()
  return c.json(toItem(row), 200)
}
