import type { RouteHandler } from '@hono/zod-openapi'
import { ok } from '../../../lib/http/openapi'
import { MAX_LISTED_REQUESTS, pendingRequests, requestJson } from '../requests'
import { permissionsRoute } from '../route'
import { PermissionList } from '../schemas'

export const route = permissionsRoute({
  method: 'get',
  path: '/api/permissions',
  operationId: 'listPermissionRequests',
  tags: ['Permissions'],
  summary: "The caller's pending permission requests, newest first",
  description:
    `Dangerous tool calls of the caller's agents waiting for a decision, newest first, at most ${MAX_LISTED_REQUESTS}. ` +
    'Decided requests are not listed, nor expired ones (not decided within 10 minutes of `createdAt`: see `expiresAt`; ' +
    'judged with the server’s clock, so one leaves the list at its expiry even before the expiry job marks it). Decide one with `POST /api/permissions/{requestId}`; `GET /api/permissions/socket` ' +
    'delivers the same requests live.',
  responses: { 200: ok(PermissionList) },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const rows = await pendingRequests(c.var.services.reader, c.var.user.id)
  return c.json({ requests: rows.map(requestJson) }, 200)
}
