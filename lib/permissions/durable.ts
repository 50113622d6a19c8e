import { parseConfig } from '../config'
import { errorFields, log } from '../log'
import { neonStore } from '../services/stores/neon'
import { type DecideOutcome, type Decision, decidePermission } from './decide'
import { answerClientMessage, type ServerMessage } from './messages'

/** The parts of a hibernatable WebSocket (workerd's `WebSocket`) used here. */
export interface HibernatingSocket {
  send(data: string): void
  close(code?: number, reason?: string): void
  serializeAttachment(value: unknown): void
  deserializeAttachment(): unknown
}

/** The parts of workerd's `DurableObjectState` used here (the WebSocket Hibernation API). */
export interface SocketState {
  acceptWebSocket(ws: HibernatingSocket, tags?: string[]): void
  getWebSockets(tag?: string): HibernatingSocket[]
}

/** Headers the Worker sets on the upgrade it forwards: whose socket this is, and its id (to send it the pending). */
export const SOCKET_USER_HEADER = 'x-permission-user'
export const SOCKET_ID_HEADER = 'x-permission-socket'

/** The object's own origin: never routable, only its namespace's stubs reach it. */
export const SOCKET_OBJECT_ORIGIN = 'https://permission-sockets.internal'

/** `POST /push`: `messages` to every socket of `userId`, or only to the socket `socketId` (the pending, on connect). */
export interface PushBody {
  userId: string
  socketId?: string
  messages: ServerMessage[]
}

const userTag = (userId: string) => `user:${userId}`
const socketTag = (socketId: string) => `socket:${socketId}`

type Decide = (userId: string, requestId: string, decision: Decision) => Promise<DecideOutcome>

/**
 * The permission socket Durable Object (Workers): one per user (`idFromName(userId)`) holds that user's open
 * dashboards with the WebSocket Hibernation API, so a push from any isolate reaches every one of them and an
 * idle socket costs nothing. The Worker checks the session, then forwards the upgrade here (`/connect`); the hook
 * and the decision route push through `/push`. A `decision` message is applied by the same decision function as
 * `POST /api/permissions/:id`, as the user (row isolation), on a database handle opened for that message.
 *
 * Written against the module-worker Durable Object interface (`constructor(state, env)`), so it needs no
 * `cloudflare:workers` import and type-checks under Node.
 */
export class PermissionSocketObject {
  constructor(
    private readonly state: SocketState,
    private readonly env: Record<string, unknown>,
    /** Tests and other hosts pass their own; on Workers the database comes from the env (Neon). */
    private readonly decide: Decide = (userId, requestId, decision) => decideOnNeon(env, userId, requestId, decision),
  ) {}

  async fetch(request: Request): Promise<Response> {
    const { pathname } = new URL(request.url)
    if (pathname === '/connect') return this.connect(request)
    if (pathname === '/push' && request.method === 'POST') return this.push((await request.json()) as PushBody)
    return Response.json({ error: 'Not found', code: 'NOT_FOUND' }, { status: 404 })
  }

  private connect(request: Request): Response {
    const userId = request.headers.get(SOCKET_USER_HEADER)
    const socketId = request.headers.get(SOCKET_ID_HEADER)
    if (request.headers.get('upgrade')?.toLowerCase() !== 'websocket' || !userId || !socketId) {
      return Response.json({ error: 'Expected a WebSocket upgrade for a user', code: 'VALIDATION' }, { status: 400 })
    }
    const Pair = (globalThis as unknown as { WebSocketPair: new () => Record<0 | 1, HibernatingSocket> }).WebSocketPair
    const { 0: client, 1: server } = new Pair()
    this.state.acceptWebSocket(server, [userTag(userId), socketTag(socketId)])
    server.serializeAttachment({ userId })
    // workerd's Response takes `webSocket` with status 101; Node's types know neither.
    return new Response(null, { status: 101, webSocket: client } as ResponseInit)
  }

  private push(body: PushBody): Response {
    const sockets = this.state.getWebSockets(body.socketId ? socketTag(body.socketId) : userTag(body.userId))
    let delivered = 0
    for (const ws of sockets) if (sendAll(ws, body.messages)) delivered++
    return Response.json({ delivered })
  }

  /** Hibernation API: a client message, applied once, answered on its socket; a decision goes to every socket of the user. */
  async webSocketMessage(ws: HibernatingSocket, message: string | ArrayBuffer) {
    const { userId } = (ws.deserializeAttachment() ?? {}) as { userId?: string }
    if (!userId) return
    const out = await answerClientMessage(message, (requestId, decision) => this.decide(userId, requestId, decision))
    if (out.reply) sendAll(ws, [out.reply])
    if (out.broadcast) for (const other of this.state.getWebSockets(userTag(userId))) sendAll(other, [out.broadcast])
  }

  /** Hibernation API: the client closed; complete the closing handshake (the runtime forgets the socket). */
  webSocketClose(ws: HibernatingSocket) {
    try {
      ws.close(1000, 'Closed')
    } catch {
      // already closed
    }
  }

  webSocketError(_ws: HibernatingSocket, error: unknown) {
    log.warn('permissions.socket_error', errorFields(error))
  }
}

/** Sends each message; false when the socket is gone (it stays the runtime's to drop). */
function sendAll(ws: HibernatingSocket, messages: ServerMessage[]) {
  try {
    for (const m of messages) ws.send(JSON.stringify(m))
    return true
  } catch {
    return false
  }
}

async function decideOnNeon(env: Record<string, unknown>, userId: string, requestId: string, decision: Decision) {
  const store = neonStore(parseConfig(env))
  try {
    return await decidePermission(store.db, userId, requestId, decision)
  } finally {
    await store.close()
  }
}
