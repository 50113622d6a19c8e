import type { RouteHandler } from '@hono/zod-openapi'
import { findOwnAgent } from '../../../lib/agents/access'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { log } from '../../../lib/log'
import { agentRoute } from '../route'
import { AgentIdParams, NOT_FOUND } from '../schemas'
import { setVerification, VerificationSchema, verificationJson } from '../verification'

export const route = agentRoute({
  method: 'post',
  path: '/api/agents/{id}/verify',
  operationId: 'verifyAgent',
  tags: ['Agents'],
  summary: 'Mark the agent human-verified',
  description:
    'The spec shows no proof step, so the proof is the owner’s own signed-in session (with the dashboard’s `Origin`): ' +
    'the owner attests that a human operates this agent. Sets `verification` to `human_verified` (which raises its ' +
    'social post limit from 5 to 50 a day) and `verifiedAt`. Idempotent: a repeat keeps the first `verifiedAt`.',
  request: { params: AgentIdParams },
  responses: { 200: ok(VerificationSchema), 404: errorResponse(NOT_FOUND) },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const agent = await findOwnAgent(c.var.services.db, c.var.user.id, c.req.valid('param').id)
  if (agent.verification === 'human_verified') return c.json(verificationJson(agent), 200)
  const row = await setVerification(c.var.services.db, agent, true)
  log.info('agent.verified', { agentId: agent.id })
  return c.json(verificationJson(row), 200)
}
