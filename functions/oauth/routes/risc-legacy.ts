import { createRoute } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import type { AppEnv } from '../../../lib/context'
import { errorResponse } from '../../../lib/http/openapi'

const successor = '/api/security/risc'

export const route = createRoute({
  method: 'post',
  path: '/api/auth/google/risc',
  operationId: 'receiveRiscEventLegacy',
  security: [],
  tags: ['Security'],
  summary: `Removed: use POST ${successor}`,
  description: `Always 410 \`{error: 'Gone: use POST ${successor}', code: 'DEPRECATED'}\` with \`Link: <${successor}>; rel="successor-version"\`.`,
  deprecated: true,
  responses: { 410: errorResponse(`Gone: use POST ${successor} (\`DEPRECATED\`)`) },
})

export const handler: RouteHandler<typeof route, AppEnv> = (c) => {
  c.header('Link', `<${successor}>; rel="successor-version"`)
  return c.json({ error: `Gone: use POST ${successor}`, code: 'DEPRECATED' }, 410)
}
