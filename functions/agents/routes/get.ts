import type { RouteHandler } from '@hono/zod-openapi'
import { findOwnAgent } from '../../../lib/agents/access'
import { agentJson } from '../../../lib/agents/lifecycle'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { agentRoute } from '../route'
import { AgentIdParams, AgentSchema, NOT_FOUND } from '../../../lib/agents/schemas'

export const route = agentRoute({
  method: 'get',
  path: '/api/agents/{id}',
  operationId: 'getAgent',
  tags: ['Agents'],
  summary: 'One of the caller’s agents',
  request: { params: AgentIdParams },
  responses: { 200: ok(AgentSchema), 404: errorResponse(NOT_FOUND) },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const agent = await findOwnAgent(c.var.services.db, c.var.user.id, c.req.valid('param').id)
  return c.json(agentJson(agent), 200)
}
