import type { RouteHandler } from '@hono/zod-openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { logTailBackend } from '../../../lib/logs/backend'
import { LOG_BUFFER_LINES, LOG_TAIL_GRACE_MS } from '../../../lib/logs/tail'
import { agentNotFoundResponse, ownAgentTarget } from '../agent'
import { AgentIdParams, LogStreamSchema } from '../schemas'

export const route = signedInRoute({
  method: 'get',
  path: '/api/logs/{agentId}/stream',
  operationId: 'streamAgentLogs',
  tags: ['Logs'],
  summary: 'Live log tail of one of the caller’s agents (server-sent events)',
  description:
    'Starts the agent’s tail if none runs (one read of the runtime’s logs per agent, shared by every client). The ' +
    `stream sends \`connected\`, the buffered lines (up to ${LOG_BUFFER_LINES}), then each new line as \`line\`, and ` +
    '`exit` before it closes (tail stopped, runtime log stream ended or failed). The tail ends ' +
    `${LOG_TAIL_GRACE_MS / 1000} s after its last client leaves.`,
  request: { params: AgentIdParams },
  responses: {
    200: { description: 'The event stream', content: { 'text/event-stream': { schema: LogStreamSchema } } },
    404: agentNotFoundResponse,
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const { target } = await ownAgentTarget(c, c.req.valid('param').agentId)
  return (await logTailBackend(c).stream(c, target)) as never
}
