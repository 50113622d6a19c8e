import type { Context } from 'hono'
import type { UpgradeWebSocket, WSContext } from 'hono/ws'
import {
  type BoundSession,
  liveSessionHashes,
  registerSessionBoundHolder,
  SESSION_ENDED_CLOSE_CODE,
  SESSION_ENDED_REASON,
  SessionBoundSet,
} from '../../lib/auth/session-bound'
import type { Services, SignedInEnv } from '../../lib/context'
import { ApiError } from '../../lib/http/errors'
import { errorFields, log } from '../../lib/log'
import { decideAsSession } from './decide'
import { answerClientMessage, type ServerMessage } from './messages'

/** What the hub needs of an open socket (hono's `WSContext`). */
type HubSocket = Pick<WSContext, 'send' | 'close'>

/**
 * The permission sockets of one process (Node: `npm start`, tests): each user's open dashboards, pushed to in
 * process. On Workers the user's Durable Object plays this part (./durable.ts). The Node server hands it the
 * WebSocket upgrader it serves with (infra/websocket.ts); without one, there is no socket to open.
 *
 * Each socket is bound to the session that opened it (lib/auth/session-bound.ts): it closes when that session
 * ends (`endSessions`, called by whatever ended it), expires, or is found gone by the periodic check; nothing is
 * pushed to it after that, and every decision it sends is applied only while that session is live.
 */
export class PermissionHub {
  private readonly open: SessionBoundSet<HubSocket>
  private upgrader: UpgradeWebSocket | null = null

  constructor(private readonly services: Services) {
    this.open = new SessionBoundSet((userId, hashes) => liveSessionHashes(services.reader, userId, hashes))
    registerSessionBoundHolder(services, this)
  }

  /** The server's upgrader (@hono/node-server's `upgradeWebSocket`), set once it listens with WebSockets. */
  acceptUpgradesWith(upgrader: UpgradeWebSocket) {
    this.upgrader = upgrader
  }

  /** Upgrades the signed-in caller's request, bound to `session`; on open, `pending` go first, then every push for the user. */
  async connect(c: Context<SignedInEnv>, pending: ServerMessage[], session: BoundSession): Promise<Response> {
    if (!this.upgrader) throw new ApiError('NOT_CONFIGURED', 'Permission socket not available')
    const { userId } = session
    return this.upgrader(c, {
      onOpen: (_event, ws) => {
        this.open.add(ws, session, () => closeEnded(ws))
        for (const message of pending) ws.send(JSON.stringify(message))
      },
      onMessage: (event, ws) => void this.answer(userId, event.data, ws),
      onClose: (_event, ws) => this.open.remove(userId, ws),
      onError: (_event, ws) => this.open.remove(userId, ws),
    })
  }

  /** Sends `message` to every open socket of `userId` whose session is live; answers how many. A socket that fails is dropped, alone. */
  async push(userId: string, message: ServerMessage): Promise<number> {
    const text = JSON.stringify(message)
    let sent = 0
    for (const ws of this.open.items(userId)) {
      try {
        ws.send(text)
        sent++
      } catch (e) {
        log.warn('permissions.socket_send_failed', errorFields(e))
        this.open.remove(userId, ws)
      }
    }
    return sent
  }

  /** Closes the sockets the listed sessions of `userId` opened (they ended); answers how many. */
  endSessions(userId: string, sessionHashes: readonly string[]) {
    return this.open.endSessions(userId, sessionHashes)
  }

  /** Closes every socket whose session expired or is gone from the database (run every `SESSION_RECHECK_MS`). */
  recheckSessions() {
    return this.open.recheck()
  }

  /** Open sockets of `userId` (tests, diagnostics). */
  count(userId: string) {
    return this.open.count(userId)
  }

  private async answer(userId: string, data: unknown, ws: HubSocket) {
    const session = this.open.sessionOf(userId, ws)
    if (!session) return // closed meanwhile: its session ended
    const out = await answerClientMessage(data, (requestId, decision) => decideAsSession(this.services.db, userId, session.sessionHash, requestId, decision))
    try {
      if (out.reply) ws.send(JSON.stringify(out.reply))
    } catch {
      this.open.remove(userId, ws) // closed meanwhile
    }
    if (out.close) {
      this.open.remove(userId, ws)
      closeEnded(ws)
      return
    }
    if (out.broadcast) await this.push(userId, out.broadcast)
  }
}

function closeEnded(ws: HubSocket) {
  try {
    ws.close(SESSION_ENDED_CLOSE_CODE, SESSION_ENDED_REASON)
  } catch {
    // already closed
  }
}

const hubs = new WeakMap<Services, PermissionHub>()

/**
 * The hub of a set of services. Node serves every request with one `Services` object (infra/services.ts), so
 * this is one hub per process (and per test harness): state keyed by that object, not a module-global
 * connection. A Worker builds services per request, which is why Workers use the Durable Object.
 */
export function permissionHub(services: Services): PermissionHub {
  let hub = hubs.get(services)
  if (!hub) hubs.set(services, (hub = new PermissionHub(services)))
  return hub
}
