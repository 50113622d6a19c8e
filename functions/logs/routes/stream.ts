import type { RouteHandler } from '@hono/zod-openapi'
import { SESSION_RECHECK_MS } from '../../../lib/auth/session-bound'
import { presentedSession } from '../../../lib/auth/session'
import { errorResponse } from '../../../lib/http/openapi'
import { limits } from '../../../lib/http/limits'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { signedInRoute } from '../../../lib/http/routes'
import { logTailBackend } from '../../../lib/logs/backend'
import { LOG_STREAM_RETRY_AFTER_SEC, MAX_LOG_STREAMS_PER_USER, SESSION_ENDED_EXIT } from '../../../lib/logs/streams'
import { LOG_BUFFER_LINES, LOG_TAIL_GRACE_MS } from '../../../lib/logs/tail'
import { agentNotFoundResponse, ownAgentTarget } from '../agent'
import { AgentIdParams, LogStreamSchema } from '../schemas'

export const route = signedInRoute(
  limitedRoute(limits.logStreamOpen, {
    method: 'get',
    path: '/api/logs/{agentId}/stream',
    operationId: 'streamAgentLogs',
    tags: ['Logs'],
    summary: 'Live log tail of one of the caller’s agents (server-sent events)',
    description:
      'Starts the agent’s tail if none runs (one read of the runtime’s logs per agent, shared by every client). The ' +
      `stream sends \`connected\`, the buffered lines (up to ${LOG_BUFFER_LINES}), then each new line as \`line\`, and ` +
      '`exit` before it closes (tail stopped, runtime log stream ended or failed). The tail ends ' +
      `${LOG_TAIL_GRACE_MS / 1000} s after its last client leaves.\n\n` +
      `A user holds at most ${MAX_LOG_STREAMS_PER_USER} streams open at once, over all their agents: one more is refused ` +
      `with 429 (\`RATE_LIMITED\`, \`RateLimit-Limit: ${MAX_LOG_STREAMS_PER_USER}\`, \`RateLimit-Remaining: 0\`, ` +
      `\`Retry-After: ${LOG_STREAM_RETRY_AFTER_SEC}\`): close one first (open streams are never closed to make room). ` +
      `Opening streams is also rate limited (${limits.logStreamOpen.limit} per minute per user).\n\n` +
      'A stream is bound to the session that opened it: when that session ends (sign-out, a password change on ' +
      'another device, a reset, a Google security event, the email’s owner proving the address, expiry) it sends ' +
      `\`exit\` (code 0, \`${SESSION_ENDED_EXIT}\`) and closes: at once, or within ${SESSION_RECHECK_MS / 1000} s if ` +
      'the notice was lost.',
    request: { params: AgentIdParams },
    responses: {
      200: { description: 'The event stream', content: { 'text/event-stream': { schema: LogStreamSchema } } },
      404: agentNotFoundResponse,
      429: errorResponse(`\`Too many open log streams: at most ${MAX_LOG_STREAMS_PER_USER} at once; close one first\` (\`RATE_LIMITED\`)`),
    },
  }),
)

export const handler: RouteHandler<typeof route> = async (c) => {
  const { target } = await ownAgentTarget(c, c.req.valid('param').agentId)
  return (await logTailBackend(c).stream(c, target, await presentedSession(c))) as never
}
