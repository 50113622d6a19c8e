import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { desc, eq } from 'drizzle-orm'
import { preparedSelect } from '../../../lib/db/prepared'
import { readAsUser } from '../../../lib/db/rls'
import { ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { type ApiKey, apiKeys } from '../../../schema'
import { toItem } from '../item'
import { ApiKeyItemSchema, MAX_KEYS_PER_USER } from '../schemas'

export const route = signedInRoute({
  method: 'get',
  path: '/api/keys',
  operationId: 'listApiKeys',
  tags: ['API keys'],
  summary: "The caller's API keys, newest first",
  responses: {
    200: ok(z.object({ keys: z.array(ApiKeyItemSchema).max(MAX_KEYS_PER_USER) }).openapi('ApiKeyList')),
  },
})

// Built once per pooled connection on the local Postgres path (lib/db/prepared.ts).
const keysOfUser = preparedSelect<{ userId: string }, ApiKey[]>(['userId'], (db, { userId }) =>
  db.select().from(apiKeys).where(eq(apiKeys.userId, userId)).orderBy(desc(apiKeys.createdAt), desc(apiKeys.id)),
)

export const handler: RouteHandler<typeof route> = async (c) => {
  const rows = await readAsUser(c, (tx) => keysOfUser(tx, { userId: c.var.user.id }))
  return c.json({ keys: rows.map(toItem) }, 200)
}
