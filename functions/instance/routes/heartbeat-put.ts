import type { RouteHandler } from '@hono/zod-openapi'
import { PAID_ACCESS_RULE, PLAN_REQUIRED_DOC } from '../../../lib/auth/plan'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { jsonBody } from '../../../lib/http/validation'
import { writeHeartbeat } from '../heartbeat'
import { HeartbeatBody, HeartbeatWriteSchema } from '../schemas'

export const heartbeatWrite = (method: 'put' | 'post', operationId: string, deprecated: boolean) =>
  signedInRoute({
    method,
    path: '/api/heartbeat',
    operationId,
    tags: ['Heartbeat'],
    summary: deprecated ? 'Set the heartbeat job (deprecated alias of PUT)' : 'Set the heartbeat job of one of the caller’s agents',
    description:
      (deprecated ? 'Deprecated: use `PUT /api/heartbeat`; answers the same with a `Deprecation: true` header. ' : '') +
      'Writes `{enabled, frequency}` to the runtime gateway of `agentId` (default the caller’s instance) and stores it; when the ' +
      'gateway write fails, stores it only (`source: db`), which needs `agentId`. `frequency` defaults to the current one, `enabled` to true. ' +
      `Enabling puts the runtime to work on a schedule, so it needs paid access at the moment of use (${PAID_ACCESS_RULE}); disabling is always open.`,
    ...(deprecated ? { deprecated: true } : {}),
    request: { body: jsonBody(HeartbeatBody) },
    responses: {
      200: ok(HeartbeatWriteSchema),
      400: errorResponse('`agentId required` (the gateway write failed), a frequency outside 30m, 1h, 2h, 3h, 6h, 12h (`VALIDATION`); or invalid JSON'),
      402: errorResponse(PLAN_REQUIRED_DOC),
      404: errorResponse('`Agent not found` (`NOT_FOUND`)'),
      500: errorResponse('Unexpected failure (`INTERNAL`)'),
    },
  })

export const route = heartbeatWrite('put', 'setHeartbeat', false)

export const handler: RouteHandler<typeof route> = async (c) => c.json(await writeHeartbeat(c, c.req.valid('json')), 200)
