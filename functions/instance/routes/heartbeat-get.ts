import type { RouteHandler } from '@hono/zod-openapi'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { readHeartbeat } from '../heartbeat'
import { HeartbeatQuery, HeartbeatSchema } from '../schemas'

export const route = signedInRoute({
  method: 'get',
  path: '/api/heartbeat',
  operationId: 'getHeartbeat',
  tags: ['Heartbeat'],
  summary: 'The heartbeat job of one of the caller’s agents',
  description:
    'Reads the runtime gateway’s heartbeat cron job of `agentId` (default the caller’s instance): `source: gateway` with ' +
    '`enabled`, `frequency`, `nextRun`, `lastRun`. When the gateway has no such job or cannot be reached, the stored setting: ' +
    '`source: db` with `enabled`, `frequency`, `message`; without `agentId`, `{source: db, enabled: false, message}`.',
  request: { query: HeartbeatQuery },
  responses: {
    200: ok(HeartbeatSchema),
    404: errorResponse('`Agent not found`: `agentId` is not one of the caller’s agents (`NOT_FOUND`)'),
    500: errorResponse('Unexpected failure (`INTERNAL`)'),
  },
})

export const handler: RouteHandler<typeof route> = async (c) => c.json(await readHeartbeat(c, c.req.valid('query').agentId), 200)
