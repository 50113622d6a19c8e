import type { RouteHandler } from '@hono/zod-openapi'
import { SESSION_ENDED_CLOSE_CODE, SESSION_ENDED_REASON, SESSION_RECHECK_MS } from '../../../lib/auth/session-bound'
import { assertTrustedOrigin, presentedSession } from '../../../lib/auth/session'
import { ApiError } from '../../../lib/http/errors'
import { errorResponse } from '../../../lib/http/openapi'
import { SESSION_ENDED } from '../decide'
import { MAX_CLIENT_MESSAGE_CHARS, requestMessage } from '../messages'
import { MAX_LISTED_REQUESTS, pendingRequests } from '../requests'
import { permissionSockets } from '../sockets'
import { permissionsRoute } from '../route'

export const route = permissionsRoute({
  method: 'get',
  path: '/api/permissions/socket',
  operationId: 'openPermissionSocket',
  tags: ['Permissions'],
  summary: 'WebSocket: the caller’s permission requests, live, and decisions',
  description:
    'A WebSocket upgrade (`Upgrade: websocket`) with the session cookie; the page must be a dashboard origin (`APP_ORIGIN`). ' +
    'Messages are JSON text frames.\n\n' +
    `Server → client: first every pending request of the caller (oldest first; the newest ${MAX_LISTED_REQUESTS} when there are more), ` +
    'then each new one as the hook records it: `{type: "permission_request", requestId, agentId, toolName, toolInput, reason, createdAt}`. ' +
    'Added here: `{type: "permission_decided", requestId, status}` (`approved` or `denied`) whenever one of the caller’s requests is ' +
    'decided, from any dashboard, the socket or `POST /api/permissions/{requestId}` (the socket that sent the decision gets it too: ' +
    'that is its confirmation); and `{type: "error", requestId, error, code}` answering a message that could not be applied, to its ' +
    'sender only (`requestId` null when the message had none): `Permission request not found` (`NOT_FOUND`, also for another ' +
    'user’s), `Permission request already decided` (`ALREADY_DECIDED`), a malformed message (`VALIDATION`, `INVALID_JSON`, ' +
    `\`PAYLOAD_TOO_LARGE\` over ${MAX_CLIENT_MESSAGE_CHARS} characters), \`INTERNAL\`.\n\n` +
    'Client → server: `{type: "decision", requestId, decision: "approve" | "deny"}`, applied once, exactly as ' +
    '`POST /api/permissions/{requestId}`. A bad message never closes the socket (nor anyone else’s).\n\n' +
    'The socket is bound to the session that opened it. Every decision is applied only while that session is live; ' +
    `when it has ended the answer is \`{type: "error", requestId, error: "${SESSION_ENDED}", code: "UNAUTHORIZED"}\` and the socket closes. ` +
    'When the session ends (sign-out, a password change on another device, a reset, a Google security event, the ' +
    'email’s owner proving the address, expiry), the socket receives nothing more and is closed with code ' +
    `${SESSION_ENDED_CLOSE_CODE} \`${SESSION_ENDED_REASON}\`: at once, or within ${SESSION_RECHECK_MS / 1000} s if the notice was lost. ` +
    'Reconnect after signing in again.',
  responses: {
    101: { description: 'Switching Protocols: the socket is open' },
    403: errorResponse('`Forbidden origin`: an `Origin` outside the dashboard’s (`ORIGIN_NOT_ALLOWED`)'),
    426: errorResponse('`Upgrade Required`: not a WebSocket upgrade (`UPGRADE_REQUIRED`); the answer carries `Upgrade: websocket`'),
    503: errorResponse('`Permission socket not available`: this server accepts no WebSockets (`NOT_CONFIGURED`)'),
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  assertTrustedOrigin(c, true)
  if (c.req.header('upgrade')?.toLowerCase() !== 'websocket') {
    throw new ApiError('UPGRADE_REQUIRED', { headers: { Upgrade: 'websocket' } })
  }
  const session = await presentedSession(c)
  const pending = await pendingRequests(c.var.services.reader, c.var.user.id)
  return permissionSockets(c).connect(c, pending.reverse().map(requestMessage), session)
}
