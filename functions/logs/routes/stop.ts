import type { RouteHandler } from '@hono/zod-openapi'
import { ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { logTailBackend } from '../../../lib/logs/backend'
import { agentNotFoundResponse, ownAgentTarget } from '../agent'
import { AgentIdParams, LogStopSchema } from '../schemas'

export const route = signedInRoute({
  method: 'post',
  path: '/api/logs/{agentId}/stop',
  operationId: 'stopAgentLogTail',
  tags: ['Logs'],
  summary: 'End the live log tail of one of the caller’s agents',
  description: 'Every connected client gets `exit` (code 0) and its stream closes; the buffer goes with the tail. The runtime is not touched.',
  request: { params: AgentIdParams },
  responses: {
    200: ok(LogStopSchema),
    404: agentNotFoundResponse,
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const { agent } = await ownAgentTarget(c, c.req.valid('param').agentId)
  const stopped = await logTailBackend(c).stop(c.var.user.id, agent.id)
  return c.json({ agentId: agent.id, stopped }, 200)
}
