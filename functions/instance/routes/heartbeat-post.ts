import type { RouteHandler } from '@hono/zod-openapi'
import { writeHeartbeat } from '../heartbeat'
import { heartbeatWrite } from './heartbeat-put'

export const route = heartbeatWrite('post', 'setHeartbeatDeprecated', true)

export const handler: RouteHandler<typeof route> = async (c) => {
  const answer = await writeHeartbeat(c, c.req.valid('json'))
  c.header('Deprecation', 'true')
  return c.json(answer, 200)
}
