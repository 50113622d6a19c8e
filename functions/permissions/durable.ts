import {
  type LiveSessions,
  liveSessionHashes,
  parseSessionsEnded,
  SESSION_ENDED_CLOSE_CODE,
  SESSION_ENDED_REASON,
  SESSION_RECHECK_MS,
  SESSIONS_ENDED_PATH,
} from '../../lib/auth/session-bound'
import { parseConfig } from '../../lib/config'
import { errorFields, log } from '../../lib/log'
import { answerError } from '../../lib/http/errors'
import { neonStore } from '../../lib/services/stores/neon'
import { type DecideOutcome, type Decision, decideAsSession } from './decide'
import { answerClientMessage, type ServerMessage } from './messages'

/** The parts of a hibernatable WebSocket (workerd's `WebSocket`) used here. */
export interface HibernatingSocket {
  send(data: string): void
  close(code?: number, reason?: string): void
  serializeAttachment(value: unknown): void
  deserializeAttachment(): unknown
  /** 1 while open (WebSocket.OPEN); a socket this object closed may still be listed until the client answers. */
  readonly readyState?: number
}

/** The parts of workerd's `DurableObjectState` used here (the WebSocket Hibernation API, and alarms). */
export interface SocketState {
  acceptWebSocket(ws: HibernatingSocket, tags?: string[]): void
  getWebSockets(tag?: string): HibernatingSocket[]
  storage?: { getAlarm(): Promise<number | null>; setAlarm(scheduledTime: number): Promise<void> }
}

/** Headers the Worker sets on the upgrade it forwards: whose socket this is, its id (to send it the pending), its session. */
export const SOCKET_USER_HEADER = 'x-permission-user'
export const SOCKET_ID_HEADER = 'x-permission-socket'
/** JSON `{sessionHash, expiresAt}`: the session the socket is bound to (lib/auth/session-bound.ts). */
export const SOCKET_SESSION_HEADER = 'x-permission-session'

/** The object's own origin: never routable, only its namespace's stubs reach it. */
export const SOCKET_OBJECT_ORIGIN = 'https://permission-sockets.internal'

/** `POST /push`: `messages` to every socket of `userId`, or only to the socket `socketId` (the pending, on connect). */
export interface PushBody {
  userId: string
  socketId?: string
  messages: ServerMessage[]
}

/** What each accepted socket carries through hibernation. */
interface Attachment {
  userId: string
  sessionHash: string
  expiresAt: number
}

const userTag = (userId: string) => `user:${userId}`
const socketTag = (socketId: string) => `socket:${socketId}`
const sessionTag = (sessionHash: string) => `session:${sessionHash}`
const OPEN = 1

type Decide = (userId: string, sessionHash: string, requestId: string, decision: Decision) => Promise<DecideOutcome | { outcome: 'session_ended' }>

/**
 * The permission socket Durable Object (Workers): one per user (`idFromName(userId)`) holds that user's open
 * dashboards with the WebSocket Hibernation API, so a push from any isolate reaches every one of them and an
 * idle socket costs nothing. The Worker checks the session, then forwards the upgrade here (`/connect`); the hook
 * and the decision route push through `/push`. A `decision` message is applied by the same decision function as
 * `POST /api/permissions/:id`, as the user (row isolation), on a database handle opened for that message, and
 * only while the session that opened the socket is live.
 *
 * Each socket is bound to its session: `POST /sessions-ended` (sent by whatever ended sessions, see
 * lib/auth/session-bound.ts) closes theirs at once; an alarm every `SESSION_RECHECK_MS` while sockets are open
 * closes those whose session expired or is gone from the database (a notice that never came); a push skips an
 * expired one.
 *
 * Written against the module-worker Durable Object interface (`constructor(state, env)`), so it needs no
 * `cloudflare:workers` import and type-checks under Node.
 */
export class PermissionSocketObject {
  constructor(
    private readonly state: SocketState,
    private readonly env: Record<string, unknown>,
    /** Tests and other hosts pass their own; on Workers the database comes from the env (Neon). */
    private readonly decide: Decide = (userId, sessionHash, requestId, decision) => decideOnNeon(env, userId, sessionHash, requestId, decision),
    private readonly live: LiveSessions = (userId, hashes) => liveOnNeon(env, userId, hashes),
    private readonly now: () => number = () => Date.now(),
  ) {}

  async fetch(request: Request): Promise<Response> {
    const { pathname } = new URL(request.url)
    if (pathname === '/connect') return this.connect(request)
    if (pathname === '/push' && request.method === 'POST') return this.push((await request.json()) as PushBody)
    if (pathname === SESSIONS_ENDED_PATH && request.method === 'POST') return this.sessionsEnded(await request.json().catch(() => null))
    return answerError('NOT_FOUND')
  }

  private async connect(request: Request): Promise<Response> {
    const userId = request.headers.get(SOCKET_USER_HEADER)
    const socketId = request.headers.get(SOCKET_ID_HEADER)
    const session = parseSession(request.headers.get(SOCKET_SESSION_HEADER))
    if (request.headers.get('upgrade')?.toLowerCase() !== 'websocket' || !userId || !socketId || !session) {
      return answerError('VALIDATION', 'Expected a WebSocket upgrade for a user session')
    }
    const Pair = (globalThis as unknown as { WebSocketPair: new () => Record<0 | 1, HibernatingSocket> }).WebSocketPair
    const { 0: client, 1: server } = new Pair()
    this.state.acceptWebSocket(server, [userTag(userId), socketTag(socketId), sessionTag(session.sessionHash)])
    server.serializeAttachment({ userId, ...session } satisfies Attachment)
    await this.armRecheck()
    // workerd's Response takes `webSocket` with status 101; Node's types know neither.
    return new Response(null, { status: 101, webSocket: client } as ResponseInit)
  }

  private push(body: PushBody): Response {
    const sockets = this.state.getWebSockets(body.socketId ? socketTag(body.socketId) : userTag(body.userId))
    let delivered = 0
    for (const ws of this.liveSockets(sockets)) if (sendAll(ws, body.messages)) delivered++
    return Response.json({ delivered })
  }

  /** `POST /sessions-ended` `{userId, sessionHashes}`: those sessions ended; their sockets close now. */
  private sessionsEnded(body: unknown): Response {
    const notice = parseSessionsEnded(body)
    if (!notice) return answerError('VALIDATION', 'Expected {userId, sessionHashes}')
    let closed = 0
    for (const hash of new Set(notice.sessionHashes)) {
      for (const ws of this.state.getWebSockets(sessionTag(hash))) {
        if (attachment(ws)?.userId !== notice.userId) continue
        closeEnded(ws)
        closed++
      }
    }
    return Response.json({ closed })
  }

  /** Hibernation API: a client message, applied once, answered on its socket; a decision goes to every socket of the user. */
  async webSocketMessage(ws: HibernatingSocket, message: string | ArrayBuffer) {
    const bound = attachment(ws)
    if (!bound) return
    if (bound.expiresAt <= this.now()) return closeEnded(ws)
    const { userId, sessionHash } = bound
    const out = await answerClientMessage(message, (requestId, decision) => this.decide(userId, sessionHash, requestId, decision))
    if (out.reply) sendAll(ws, [out.reply])
    if (out.close) return closeEnded(ws)
    if (out.broadcast) for (const other of this.liveSockets(this.state.getWebSockets(userTag(userId)))) sendAll(other, [out.broadcast])
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

  /**
   * The periodic check (an alarm, so it runs through hibernation): closes sockets whose session expired or is no
   * longer in the database, and comes back while sockets remain. A check that cannot reach the database keeps
   * them until the next one (every decision is checked on its own anyway).
   */
  async alarm() {
    const open = this.liveSockets(this.state.getWebSockets())
    const byUser = new Map<string, Array<{ ws: HibernatingSocket; sessionHash: string }>>()
    for (const ws of open) {
      const bound = attachment(ws)!
      const list = byUser.get(bound.userId) ?? []
      list.push({ ws, sessionHash: bound.sessionHash })
      byUser.set(bound.userId, list)
    }
    let remaining = 0
    for (const [userId, sockets] of byUser) {
      let live: Set<string>
      try {
        live = await this.live(userId, [...new Set(sockets.map((s) => s.sessionHash))])
      } catch (e) {
        log.warn('session.recheck_failed', { userId, ...errorFields(e) })
        remaining += sockets.length
        continue
      }
      for (const s of sockets) {
        if (live.has(s.sessionHash)) remaining++
        else closeEnded(s.ws)
      }
    }
    if (remaining) await this.state.storage?.setAlarm(this.now() + SESSION_RECHECK_MS)
  }

  /** Open sockets whose session has not expired; the expired ones are closed on the way. */
  private liveSockets(sockets: HibernatingSocket[]) {
    const now = this.now()
    return sockets.filter((ws) => {
      if (ws.readyState !== undefined && ws.readyState !== OPEN) return false
      const bound = attachment(ws)
      if (bound && bound.expiresAt > now) return true
      closeEnded(ws)
      return false
    })
  }

  private async armRecheck() {
    const storage = this.state.storage
    if (storage && (await storage.getAlarm()) === null) await storage.setAlarm(this.now() + SESSION_RECHECK_MS)
  }
}

function parseSession(raw: string | null): Omit<Attachment, 'userId'> | null {
  try {
    const v = raw ? (JSON.parse(raw) as Partial<Attachment>) : null
    return v && typeof v.sessionHash === 'string' && v.sessionHash && typeof v.expiresAt === 'number' ? { sessionHash: v.sessionHash, expiresAt: v.expiresAt } : null
  } catch {
    return null
  }
}

const attachment = (ws: HibernatingSocket) => {
  const a = ws.deserializeAttachment() as Partial<Attachment> | null
  return a && typeof a.userId === 'string' && typeof a.sessionHash === 'string' && typeof a.expiresAt === 'number' ? (a as Attachment) : null
}

function closeEnded(ws: HibernatingSocket) {
  try {
    ws.close(SESSION_ENDED_CLOSE_CODE, SESSION_ENDED_REASON)
  } catch {
    // already closed
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

async function decideOnNeon(env: Record<string, unknown>, userId: string, sessionHash: string, requestId: string, decision: Decision) {
  const store = neonStore(parseConfig(env))
  try {
    return await decideAsSession(store.db, userId, sessionHash, requestId, decision)
  } finally {
    await store.close()
  }
}

async function liveOnNeon(env: Record<string, unknown>, userId: string, sessionHashes: readonly string[]) {
  const store = neonStore(parseConfig(env))
  try {
    return await liveSessionHashes(store.reader, userId, sessionHashes)
  } finally {
    await store.close()
  }
}
