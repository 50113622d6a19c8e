import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { desc, eq } from 'drizzle-orm'
import { requireSession } from '../../../lib/auth/session'
import type { AppEnv } from '../../../lib/context'
import { readAsUser } from '../../../lib/db/rls'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { apiKeys } from '../../../schema'
import { toItem } from '../item'
import { ApiKeyItemSchema } from '../schemas'

export const route = createRoute({
  method: 'get',
  path: '/api/keys',
  tags: ['API keys'],
  summary: "The caller's API keys, newest first",
  middleware: [requireSession] as const,
  security: [{ session: [] }],
  responses: {
    200: ok(z.object({ keys: z.array(ApiKeyItemSchema) }).openapi('ApiKeyList')),
    401: errorResponse('No session'),
    500: errorResponse('Internal server error'),
  },
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const rows = await readAsUser(c, (tx) =>
    tx.select().from(apiKeys).where(eq(apiKeys.userId, c.var.user!.id)).orderBy(desc(apiKeys.createdAt), desc(apiKeys.id)),
  )
  return c.json({ keys: rows.map(toItem) }, 200)
}
