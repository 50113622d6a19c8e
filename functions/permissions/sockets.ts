import type { Context } from 'hono'
import type { BoundSession } from '../../lib/auth/session-bound'
import type { AppContext, SignedInEnv } from '../../lib/context'
import { errorFields, log } from '../../lib/log'
import type { DurableNamespaceLike } from '../../lib/logs/backend'
import { type PushBody, SOCKET_ID_HEADER, SOCKET_OBJECT_ORIGIN, SOCKET_SESSION_HEADER, SOCKET_USER_HEADER } from './durable'
import { permissionHub } from './hub'
import type { ServerMessage } from './messages'

/** The binding name of the permission socket Durable Object namespace (wrangler.toml `[env.permissions]`). */
export const PERMISSION_SOCKETS_BINDING = 'PERMISSION_SOCKETS'

/** Where a user's open dashboards live: this process's hub, or the user's Durable Object. */
export interface PermissionSockets {
  /**
   * Accepts the signed-in caller's WebSocket upgrade, bound to the session that opened it (it closes when that
   * session ends); `pending` are the first messages on the new socket.
   */
  connect(c: Context<SignedInEnv>, pending: ServerMessage[], session: BoundSession): Promise<Response>
  /** Sends `message` to every open dashboard of `userId`. */
  push(userId: string, message: ServerMessage): Promise<unknown>
}

/** One Durable Object per user holds the sockets (./durable.ts); the Worker forwards to it. */
export function durableSockets(ns: DurableNamespaceLike): PermissionSockets {
  const stub = (userId: string) => ns.get(ns.idFromName(userId))
  const push = async (userId: string, body: PushBody) => {
    const res = await stub(userId).fetch(`${SOCKET_OBJECT_ORIGIN}/push`, { method: 'POST', body: JSON.stringify(body) })
    if (!res.ok) throw new Error(`permission socket object answered ${res.status}`)
    return res.json()
  }
  return {
    async connect(_c, pending, session) {
      const { userId } = session
      const socketId = crypto.randomUUID()
      const bound = JSON.stringify({ sessionHash: session.sessionHash, expiresAt: session.expiresAt })
      const res = await stub(userId).fetch(`${SOCKET_OBJECT_ORIGIN}/connect`, {
        headers: { upgrade: 'websocket', [SOCKET_USER_HEADER]: userId, [SOCKET_ID_HEADER]: socketId, [SOCKET_SESSION_HEADER]: bound },
      })
      const webSocket = (res as Response & { webSocket?: unknown }).webSocket
      if (res.status !== 101 || !webSocket) throw new Error(`permission socket object refused the upgrade (${res.status})`)
      // Queued on the accepted socket before the client has it: they arrive first, in order.
      if (pending.length) await push(userId, { userId, socketId, messages: pending })
      // A fresh response: the fetched one's headers are immutable, and the middleware after this adds some.
      return new Response(null, { status: 101, webSocket } as ResponseInit)
    },
    push: (userId, message) => push(userId, { userId, messages: [message] }),
  }
}

/** The Durable Object namespace when this Worker has the binding, else the process's hub (Node). */
export function permissionSockets(c: AppContext): PermissionSockets {
  const ns = (c.env as Record<string, unknown> | undefined)?.[PERMISSION_SOCKETS_BINDING] as DurableNamespaceLike | undefined
  return ns && typeof ns.idFromName === 'function' ? durableSockets(ns) : permissionHub(c.var.services)
}

/**
 * Tells `userId`'s open dashboards, after the response when the runtime allows it (Workers' `waitUntil`), else
 * before it. Best effort: the request is in Postgres, so a failed push is logged and never fails the caller; a
 * dashboard that connects later gets every pending request.
 */
export async function notifyDashboards(c: AppContext, userId: string, message: ServerMessage) {
  const sent = permissionSockets(c)
    .push(userId, message)
    .then(
      () => undefined,
      (e) => log.warn('permissions.push_failed', { type: message.type, requestId: message.requestId, ...errorFields(e) }),
    )
  try {
    c.executionCtx.waitUntil(sent)
  } catch {
    await sent // no execution context (Node)
  }
}
