import { createRoute } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import type { AppEnv } from '../../../lib/context'
import { ApiError } from '../../../lib/http/errors'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { REQUEST_NOT_FOUND } from '../decide'
import { findRequestForHook, type PermissionStatus } from '../requests'
import { internalKeyResponses, requireInternalKey } from '../internal-key'
import { PollResult, RequestIdParams } from '../schemas'

export const route = createRoute({
  method: 'get',
  path: '/api/hooks/permissions/{requestId}',
  operationId: 'pollPermissionRequest',
  tags: ['Hooks'],
  summary: "The hook's poll: a permission request's state (internal key)",
  description:
    'After `POST /api/hooks/classify` answered `dangerous` with a `requestId`, the runtime polls here (internal key) until ' +
    '`status` is `approved` (make the call) or `denied` (do not). `pending` means nobody has decided yet; how long to wait ' +
    'is the runtime’s choice (giving up means denied). A request is decided once and never changes afterwards. Not rate ' +
    'limited, as the hook.',
  middleware: [requireInternalKey] as const,
  security: [{ sharedKey: [] }],
  request: { params: RequestIdParams },
  responses: {
    200: ok(PollResult),
    404: errorResponse(`\`${REQUEST_NOT_FOUND}\` (\`NOT_FOUND\`)`),
    ...internalKeyResponses,
  },
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const request = await findRequestForHook(c.var.services.reader, c.req.valid('param').requestId)
  if (!request) throw new ApiError('NOT_FOUND', REQUEST_NOT_FOUND)
  return c.json({ requestId: request.id, status: request.status as PermissionStatus, decidedAt: request.decidedAt?.toISOString() ?? null }, 200)
}
