import type { RouteHandler } from '@hono/zod-openapi'
import { findOwnAgent } from '../../../lib/agents/access'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { agentRoute } from '../route'
import { AgentIdParams, NOT_FOUND } from '../../../lib/agents/schemas'
import { VerificationSchema, verificationJson } from '../verification'

export const route = agentRoute({
  method: 'get',
  path: '/api/agents/{id}/verification',
  operationId: 'getAgentVerification',
  tags: ['Agents'],
  summary: 'Whether the agent is marked human-verified',
  request: { params: AgentIdParams },
  responses: { 200: ok(VerificationSchema), 404: errorResponse(NOT_FOUND) },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const agent = await findOwnAgent(c.var.services.db, c.var.user.id, c.req.valid('param').id)
  return c.json(verificationJson(agent), 200)
}
