import type { RouteHandler } from '@hono/zod-openapi'
import { findOwnAgent } from '../../../lib/agents/access'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { log } from '../../../lib/log'
import { agentRoute } from '../route'
import { AgentIdParams, NOT_FOUND } from '../../../lib/agents/schemas'
import { setVerification, VerificationSchema, verificationJson } from '../verification'

export const route = agentRoute({
  method: 'delete',
  path: '/api/agents/{id}/verify',
  operationId: 'unverifyAgent',
  tags: ['Agents'],
  summary: 'Remove the agent’s human-verified mark',
  description: 'Sets `verification` back to `unverified` and clears `verifiedAt`. Idempotent.',
  request: { params: AgentIdParams },
  responses: { 200: ok(VerificationSchema), 404: errorResponse(NOT_FOUND) },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const agent = await findOwnAgent(c.var.services.db, c.var.user.id, c.req.valid('param').id)
  if (agent.verification !== 'human_verified') return c.json(verificationJson(agent), 200)
  const row = await setVerification(c.var.services.db, agent, false)
  log.info('agent.unverified', { agentId: agent.id })
  return c.json(verificationJson(row), 200)
}
