import type { RouteHandler } from '@hono/zod-openapi'
import { asc, eq } from 'drizzle-orm'
import { readAsUser } from '../../../lib/db/rls'
import { ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { logTailBackend } from '../../../lib/logs/backend'
import { agents } from '../../../schema'
import { ActiveTailsSchema, MAX_ACTIVE_AGENTS } from '../schemas'

export const route = signedInRoute({
  method: 'get',
  path: '/api/logs/active',
  operationId: 'listActiveLogTails',
  tags: ['Logs'],
  summary: 'The caller’s agents with a running live log tail',
  description: `Among the caller’s first ${MAX_ACTIVE_AGENTS} agents (oldest first). Other users’ tails are never listed.`,
  responses: {
    200: ok(ActiveTailsSchema),
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const own = await readAsUser(c, (db) =>
    db.select({ id: agents.id }).from(agents).where(eq(agents.userId, c.var.user.id)).orderBy(asc(agents.createdAt)).limit(MAX_ACTIVE_AGENTS),
  )
  return c.json({ tails: await logTailBackend(c).active(c.var.user.id, own.map((a) => a.id)) }, 200)
}
