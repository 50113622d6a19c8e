import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { findOwnAgent } from '../../../lib/agents/access'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { agentRoute } from '../route'
import { AgentConfigSchema, AgentIdParams, NOT_FOUND } from '../../../lib/agents/schemas'

export const AgentConfigAnswer = z.object({ agentId: z.string().max(255), config: AgentConfigSchema }).openapi('AgentConfigAnswer')

export const route = agentRoute({
  method: 'get',
  path: '/api/agents/{id}/config',
  operationId: 'getAgentConfig',
  tags: ['Agents'],
  summary: 'An agent’s configuration',
  request: { params: AgentIdParams },
  responses: { 200: ok(AgentConfigAnswer), 404: errorResponse(NOT_FOUND) },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const agent = await findOwnAgent(c.var.services.db, c.var.user.id, c.req.valid('param').id)
  return c.json({ agentId: agent.id, config: agent.config }, 200)
}
