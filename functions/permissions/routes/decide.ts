import type { RouteHandler } from '@hono/zod-openapi'
import { ApiError } from '../../../lib/http/errors'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { jsonBody } from '../../../lib/http/validation'
import { log } from '../../../lib/log'
import { decidePermission, REQUEST_ALREADY_DECIDED, REQUEST_EXPIRED, REQUEST_NOT_FOUND } from '../decide'
import { decidedMessage } from '../messages'
import { requestJson } from '../requests'
import { notifyDashboards } from '../sockets'
import { permissionsRoute } from '../route'
import { DecisionBody, PermissionRequestSchema, RequestIdParams } from '../schemas'

export const route = permissionsRoute({
  method: 'post',
  path: '/api/permissions/{requestId}',
  operationId: 'decidePermissionRequest',
  tags: ['Permissions'],
  summary: 'Approve or deny one of the caller’s permission requests',
  description:
    '`approve` lets the agent make the tool call, `deny` refuses it; the hook learns it at its next poll. A request is ' +
    'decided once: a second decision, whichever it is and from wherever (another dashboard, the socket), is 409. ' +
    "Another user's request reads as absent (404). A request nobody decided within 10 minutes of its creation " +
    '(`expiresAt`) has expired, which denied the call: deciding it is 410 `PERMISSION_EXPIRED` (410 as an expired invite: ' +
    'the request is gone for good, unlike a decided one), judged with the server’s clock even before the expiry job marks ' +
    "the row. The caller's open dashboards get `{type: \"permission_decided\", requestId, status}` on `GET /api/permissions/socket`.",
  request: { params: RequestIdParams, body: jsonBody(DecisionBody) },
  responses: {
    200: ok(PermissionRequestSchema, 'The request, decided: `status` `approved` or `denied`, `decidedAt` set'),
    400: errorResponse('`decision must be approve or deny` (`VALIDATION`); or invalid JSON (`INVALID_JSON`)'),
    404: errorResponse(`\`${REQUEST_NOT_FOUND}\`: no such request, or not the caller’s (\`NOT_FOUND\`)`),
    409: errorResponse(`\`${REQUEST_ALREADY_DECIDED}\` (\`ALREADY_DECIDED\`), with its \`status\``),
    410: errorResponse(`\`${REQUEST_EXPIRED}\` (\`PERMISSION_EXPIRED\`): not decided within 10 minutes, so denied`),
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const { requestId } = c.req.valid('param')
  const userId = c.var.user.id
  const done = await decidePermission(c.var.services.db, userId, requestId, c.req.valid('json').decision)
  if (done.outcome === 'not_found') throw new ApiError('NOT_FOUND', REQUEST_NOT_FOUND)
  if (done.outcome === 'expired') throw new ApiError('PERMISSION_EXPIRED', REQUEST_EXPIRED)
  if (done.outcome === 'already_decided') {
    throw new ApiError('ALREADY_DECIDED', { message: REQUEST_ALREADY_DECIDED, extra: { status: done.request.status } })
  }
  log.info('permissions.decided', { requestId, status: done.request.status, via: 'http' })
  await notifyDashboards(c, userId, decidedMessage(done.request))
  return c.json(requestJson(done.request), 200)
}
