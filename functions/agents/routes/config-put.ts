import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { eq } from 'drizzle-orm'
import { findOwnAgent } from '../../../lib/agents/access'
import { asUser } from '../../../lib/db/rls'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { jsonBody } from '../../../lib/http/validation'
import { agents } from '../../../schema'
import { agentRoute } from '../route'
import { AgentConfigSchema, AgentIdParams, NOT_FOUND } from '../../../lib/agents/schemas'
import { AgentConfigAnswer } from './config-get'

const Body = z.object({ config: AgentConfigSchema }, { error: 'Request body must be a JSON object' }).strict().openapi('PutAgentConfig')

export const route = agentRoute({
  method: 'put',
  path: '/api/agents/{id}/config',
  operationId: 'putAgentConfig',
  tags: ['Agents'],
  summary: 'Replace an agent’s configuration',
  description: 'The whole configuration is replaced. It reaches the runtime with the next `POST /api/agents/{id}/sync`.',
  request: { params: AgentIdParams, body: jsonBody(Body) },
  responses: {
    200: ok(AgentConfigAnswer),
    400: errorResponse('`config` missing, not an object or over its bounds (`VALIDATION`); or invalid JSON (`INVALID_JSON`)'),
    404: errorResponse(NOT_FOUND),
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const { config } = c.req.valid('json')
  const agent = await findOwnAgent(c.var.services.db, c.var.user.id, c.req.valid('param').id)
  const [row] = await asUser(c, (tx) => tx.update(agents).set({ config, updatedAt: new Date() }).where(eq(agents.id, agent.id)).returning())
  return c.json({ agentId: row.id, config: row.config }, 200)
}
