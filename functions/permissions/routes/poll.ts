import { createRoute } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import type { AppEnv } from '../../../lib/context'
import { ApiError } from '../../../lib/http/errors'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { REQUEST_NOT_FOUND } from '../decide'
import { expiresAt, findRequestForHook, type PermissionStatus, statusAt } from '../requests'
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
    '`status` is `approved` (make the call) or `denied` (do not). `pending` means nobody has decided yet. A request nobody ' +
    'decided within 10 minutes of its creation (`expiresAt`) has expired: the poll reads it as a denial, `status: denied` ' +
    'with `expired: true` and `decidedAt` the moment it expired, judged with the server’s clock at the poll (the expiry ' +
    'job marking the row may come a little later). Anything but an explicit approval denies: giving up polling earlier ' +
    'also means denied. A request is decided (or expires) once and never changes afterwards. Not rate limited, as the hook.',
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
  const until = expiresAt(request)
  const status = statusAt(request, new Date())
  if (status === 'expired') return c.json({ requestId: request.id, status: 'denied' as const, decidedAt: until.toISOString(), expired: true, expiresAt: until.toISOString() }, 200)
  return c.json(
    { requestId: request.id, status: status as PermissionStatus, decidedAt: request.decidedAt?.toISOString() ?? null, expired: false, expiresAt: until.toISOString() },
    200,
  )
}
