import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { asc, eq } from 'drizzle-orm'
import { agentJson } from '../../../lib/agents/lifecycle'
import { requireSharedKey } from '../../../lib/auth/shared-key'
import type { AppEnv } from '../../../lib/context'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { agents } from '../../../schema'
import { AgentListSchema, MAX_LISTED_AGENTS } from '../../../lib/agents/schemas'

export const route = createRoute({
  method: 'get',
  path: '/api/agents/user/{userId}',
  operationId: 'listAgentsForUser',
  tags: ['Agents'],
  summary: "A user's agents (internal: shared key)",
  description:
    `For the platform's own services (edge runtime): \`Authorization: Bearer <INTERNAL_API_KEY>\`. A user's agents, oldest ` +
    `first, at most ${MAX_LISTED_AGENTS}; an unknown user has none. Never the gateway tokens.`,
  middleware: [requireSharedKey],
  security: [{ sharedKey: [] }],
  request: { params: z.object({ userId: z.string().max(255).openapi({ param: { name: 'userId', in: 'path' }, description: 'The user id' }) }) },
  responses: {
    200: ok(AgentListSchema),
    401: errorResponse('`Unauthorized`: no Bearer token (`UNAUTHORIZED`)'),
    403: errorResponse('`Forbidden`: not the shared key (`FORBIDDEN`)'),
    500: errorResponse('`Server misconfigured`: `INTERNAL_API_KEY` unset (`MISCONFIGURED`); or an internal error'),
  },
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { userId } = c.req.valid('param')
  const rows = await c.var.services.reader.asService('agentsForUser', (tx) =>
    tx.select().from(agents).where(eq(agents.userId, userId)).orderBy(asc(agents.createdAt), asc(agents.id)).limit(MAX_LISTED_AGENTS),
  )
  return c.json({ agents: rows.map(agentJson) }, 200)
}
