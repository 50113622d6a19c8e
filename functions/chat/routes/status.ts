import type { RouteHandler } from '@hono/zod-openapi'
import { findChatAgent } from '../agent'
import { gatewayStatus } from '../status'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { GatewayStatusSchema } from '../schemas'

export const route = signedInRoute({
  method: 'get',
  path: '/api/gateway/status',
  operationId: 'getGatewayStatus',
  tags: ['Gateway'],
  summary: 'The caller’s agent gateway: health, sessions, cron jobs',
  description:
    'The agent is the one chat uses (a `running` one with a provisioned runtime first, then the most recently created). ' +
    'Its gateway is asked for its sessions and cron jobs at once; the sessions read is the health check: answered is ' +
    '`healthy` with `healthDetail {ok: true, status: 200}`. A runtime that does not answer (or has no URL or gateway ' +
    'token yet) is still 200: `health: unreachable`, `healthDetail {ok: false, error}`, empty lists and zero counts. ' +
    'A cron read that fails alone leaves the cron part empty. `sessions.active` counts sessions with a message in the ' +
    'last hour; `sessions.list` holds the 10 most recently active. A cron job’s `schedule` is its frequency (`1h`, ...).',
  responses: {
    200: ok(GatewayStatusSchema),
    404: errorResponse('`User not found` (`USER_NOT_FOUND`); `No agent found`; `No OpenClaw instance found` (`NOT_FOUND`), as for chat'),
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const agent = await findChatAgent(c.var.services, c.var.user.id)
  return c.json(await gatewayStatus(c.var.services, agent), 200)
}
