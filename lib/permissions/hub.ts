import type { Context } from 'hono'
import type { UpgradeWebSocket, WSContext } from 'hono/ws'
import type { Services, SignedInEnv } from '../context'
import { ApiError } from '../http/errors'
import { errorFields, log } from '../log'
import { decidePermission } from './decide'
import { answerClientMessage, type ServerMessage } from './messages'

/** What the hub needs of an open socket (hono's `WSContext`). */
type HubSocket = Pick<WSContext, 'send'>

/**
 * The permission sockets of one process (Node: `npm start`, tests): each user's open dashboards, pushed to in
 * process. On Workers the user's Durable Object plays this part (./durable.ts). The Node server hands it the
 * WebSocket upgrader it serves with (infra/websocket.ts); without one, there is no socket to open.
 */
export class PermissionHub {
  private readonly open = new Map<string, Set<HubSocket>>()
  private upgrader: UpgradeWebSocket | null = null

  constructor(private readonly services: Services) {}

  /** The server's upgrader (@hono/node-server's `upgradeWebSocket`), set once it listens with WebSockets. */
  acceptUpgradesWith(upgrader: UpgradeWebSocket) {
    this.upgrader = upgrader
  }

  /** Upgrades the signed-in caller's request; on open, `pending` go first, then every push for the user. */
  async connect(c: Context<SignedInEnv>, pending: ServerMessage[]): Promise<Response> {
    if (!this.upgrader) throw new ApiError(503, 'Permission socket not available', { code: 'NOT_CONFIGURED' })
    const userId = c.var.user.id
    return this.upgrader(c, {
      onOpen: (_event, ws) => {
        this.add(userId, ws)
        for (const message of pending) ws.send(JSON.stringify(message))
      },
      onMessage: (event, ws) => void this.answer(userId, event.data, ws),
      onClose: (_event, ws) => this.remove(userId, ws),
      onError: (_event, ws) => this.remove(userId, ws),
    })
  }

  /** Sends `message` to every open socket of `userId`; answers how many. A socket that fails is dropped, alone. */
  async push(userId: string, message: ServerMessage): Promise<number> {
    const text = JSON.stringify(message)
    let sent = 0
    for (const ws of this.open.get(userId) ?? []) {
      try {
        ws.send(text)
        sent++
      } catch (e) {
        log.warn('permissions.socket_send_failed', errorFields(e))
        this.remove(userId, ws)
      }
    }
    return sent
  }

  /** Open sockets of `userId` (tests, diagnostics). */
  count(userId: string) {
    return this.open.get(userId)?.size ?? 0
  }

  private add(userId: string, ws: HubSocket) {
    let mine = this.open.get(userId)
    if (!mine) this.open.set(userId, (mine = new Set()))
    mine.add(ws)
  }

  private remove(userId: string, ws: HubSocket) {
    const mine = this.open.get(userId)
    if (mine?.delete(ws) && mine.size === 0) this.open.delete(userId)
  }

  private async answer(userId: string, data: unknown, ws: HubSocket) {
    const out = await answerClientMessage(data, (requestId, decision) => decidePermission(this.services.db, userId, requestId, decision))
    try {
      if (out.reply) ws.send(JSON.stringify(out.reply))
    } catch {
      this.remove(userId, ws) // closed meanwhile
    }
    if (out.broadcast) await this.push(userId, out.broadcast)
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
