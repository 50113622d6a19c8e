import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { errorResponse } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { jsonBody } from '../../../lib/http/validation'
import { noAgent, RUNTIME_ACTION_TIMEOUT_MS } from '../runtime'

const RUNTIME_ACTIONS = ['pair', 'unpair', 'test-push'] as const

const RuntimeActionBody = z
  .object(
    {
      action: z.enum(RUNTIME_ACTIONS, { error: (iss) => (iss.input === undefined ? 'Missing action' : 'Invalid action') }),
      deviceId: z
        .string({ error: (iss) => (iss.input === undefined ? 'Missing deviceId' : 'deviceId must be a string') })
        .min(1, 'Missing deviceId')
        .max(255, 'Device not found')
        .optional()
        .openapi({ description: 'Required for `unpair` and `test-push`' }),
    },
    { error: 'Request body must be a JSON object' },
  )
  .refine((b) => b.action === 'pair' || b.deviceId !== undefined, { message: 'Missing deviceId', path: ['deviceId'] })
  .openapi('RuntimeDeviceAction')

export const route = signedInRoute({
  method: 'post',
  path: '/api/runtime/devices',
  operationId: 'runRuntimeDeviceAction',
  tags: ['Devices'],
  summary: 'Pair, unpair or test-push through the caller’s agent runtime (deprecated proxy)',
  description:
    'Deprecated: use the `/api/devices` routes. Proxies to the caller’s runtime, answering 502 after ' +
    `${RUNTIME_ACTION_TIMEOUT_MS / 1000} s. The body is validated first; agents do not exist yet, so a valid ` +
    'request answers 404 `No agent found`.',
  deprecated: true,
  request: { body: jsonBody(RuntimeActionBody) },
  responses: {
    400: errorResponse('`Missing action`, `Invalid action` or `Missing deviceId` (`VALIDATION`); or invalid JSON'),
    404: errorResponse('`No agent found`'),
  },
})

export const handler: RouteHandler<typeof route> = async () => {
  throw noAgent()
}
