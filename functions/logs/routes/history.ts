import type { RouteHandler } from '@hono/zod-openapi'
import { ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { logTailBackend } from '../../../lib/logs/backend'
import { agentNotFoundResponse, ownAgentTarget } from '../agent'
import { AgentIdParams, LogHistorySchema } from '../schemas'

export const route = signedInRoute({
  method: 'get',
  path: '/api/logs/{agentId}/history',
  operationId: 'getAgentLogHistory',
  tags: ['Logs'],
  summary: 'The buffered lines of an agent’s live log tail',
  description: 'What the running tail holds; does not start one (`active: false` and no lines without a tail).',
  request: { params: AgentIdParams },
  responses: {
    200: ok(LogHistorySchema),
    404: agentNotFoundResponse,
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const { agent } = await ownAgentTarget(c, c.req.valid('param').agentId)
  const { active, lines } = await logTailBackend(c).history(c.var.user.id, agent.id)
  return c.json({ agentId: agent.id, active, lines }, 200)
}
