import type { RouteHandler } from '@hono/zod-openapi'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { jsonBody } from '../../../lib/http/validation'
import { writeHeartbeat } from '../heartbeat'
import { HeartbeatDeleteBody, HeartbeatWriteSchema } from '../schemas'

export const route = signedInRoute({
  method: 'delete',
  path: '/api/heartbeat',
  operationId: 'disableHeartbeat',
  tags: ['Heartbeat'],
  summary: 'Disable the heartbeat job (deprecated)',
  description: 'Deprecated: use `PUT /api/heartbeat` with `enabled: false`, which this is; answers with a `Deprecation: true` header.',
  deprecated: true,
  request: { body: jsonBody(HeartbeatDeleteBody) },
  responses: {
    200: ok(HeartbeatWriteSchema),
    400: errorResponse('`agentId required` (`VALIDATION`); or invalid JSON'),
    404: errorResponse('`Agent not found` (`NOT_FOUND`)'),
    500: errorResponse('Unexpected failure (`INTERNAL`)'),
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const answer = await writeHeartbeat(c, { agentId: c.req.valid('json').agentId, enabled: false })
  c.header('Deprecation', 'true')
  return c.json(answer, 200)
}
