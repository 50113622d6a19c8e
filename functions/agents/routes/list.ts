import type { RouteHandler } from '@hono/zod-openapi'
import { asc, eq } from 'drizzle-orm'
import { agentJson } from '../../../lib/agents/lifecycle'
import { preparedSelect } from '../../../lib/db/prepared'
import { readAsUser } from '../../../lib/db/rls'
import { ok } from '../../../lib/http/openapi'
import { type Agent, agents } from '../../../schema'
import { agentRoute } from '../route'
import { AgentListSchema, MAX_LISTED_AGENTS } from '../../../lib/agents/schemas'

export const route = agentRoute({
  method: 'get',
  path: '/api/agents',
  operationId: 'listAgents',
  tags: ['Agents'],
  summary: "The caller's agents, oldest first",
  description: `At most ${MAX_LISTED_AGENTS}. Each agent's \`status\` is what the platform last commanded or learned; \`GET /api/agents/{id}/stats\` probes the runtime.`,
  responses: { 200: ok(AgentListSchema) },
})

// Built once per pooled connection on the local Postgres path (lib/db/prepared.ts): the dashboard's most frequent read.
const agentsOfUser = preparedSelect<{ userId: string }, Agent[]>(['userId'], (db, { userId }) =>
  db.select().from(agents).where(eq(agents.userId, userId)).orderBy(asc(agents.createdAt), asc(agents.id)).limit(MAX_LISTED_AGENTS),
)

export const handler: RouteHandler<typeof route> = async (c) => {
  const rows = await readAsUser(c, (tx) => agentsOfUser(tx, { userId: c.var.user.id }))
  return c.json({ agents: rows.map(agentJson) }, 200)
}
