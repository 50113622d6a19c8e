import type { RouteHandler } from '@hono/zod-openapi'
import { errorResponse } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { noAgent, RUNTIME_LIST_TIMEOUT_MS } from '../runtime'

export const route = signedInRoute({
  method: 'get',
  path: '/api/runtime/devices',
  operationId: 'listRuntimeDevices',
  tags: ['Devices'],
  summary: 'Devices known to the caller’s agent runtime (deprecated proxy)',
  description:
    'Deprecated: use `GET /api/devices`. Proxies to the caller’s runtime, answering 502 after ' +
    `${RUNTIME_LIST_TIMEOUT_MS / 1000} s. Agents do not exist yet, so it always answers 404 \`No agent found\`.`,
  deprecated: true,
  responses: {
    404: errorResponse('`No agent found`'),
  },
})

export const handler: RouteHandler<typeof route> = async () => {
  throw noAgent()
}
