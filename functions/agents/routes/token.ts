import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { findOwnAgent, openGatewayToken, TOKEN_UNREADABLE_DOC } from '../../../lib/agents/access'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { agentRoute } from '../route'
import { AgentIdParams, NOT_FOUND } from '../../../lib/agents/schemas'

export const route = agentRoute({
  method: 'get',
  path: '/api/agents/{id}/token',
  operationId: 'getAgentToken',
  tags: ['Agents'],
  summary: 'The agent’s gateway token (owner only)',
  description:
    "The token the runtime's gateway API requires (`Authorization: Bearer`). Stored encrypted; opened only for the " +
    'owner, answered with `Cache-Control: no-store`. Another user’s agent is 404, never the token. A token sealed under a ' +
    'key this server no longer has (its keys changed or were lost) is 409 `SECRET_UNREADABLE`: `POST /api/agents/{id}/repair` ' +
    'gives the agent a new one (then read here), `DELETE /api/agents/{id}` removes the agent without it.',
  request: { params: AgentIdParams },
  responses: {
    200: ok(z.object({ agentId: z.string().max(255), token: z.string().max(256).nullable().openapi({ description: 'Null when the agent has none' }) }).openapi('AgentToken')),
    404: errorResponse(NOT_FOUND),
    409: errorResponse(`The token cannot be opened: ${TOKEN_UNREADABLE_DOC}`),
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const agent = await findOwnAgent(c.var.services.db, c.var.user.id, c.req.valid('param').id)
  const token = await openGatewayToken(c.var.services.config, agent)
  return c.json({ agentId: agent.id, token }, 200)
}
