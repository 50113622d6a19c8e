import { and, eq, gt, inArray, ne, sql } from 'drizzle-orm'
import { sessions } from '../../schema'
import type { AppContext } from '../context'
import type { Db, Reader } from '../db/rls'
import { errorFields, log } from '../log'
import { expireCachedSessions } from './session-cache'

/**
 * What a session opens that outlives the request (the permission socket, live log streams) is bound to that
 * session: it closes when the session ends, by whatever path (sign-out, password change or reset, RISC, the
 * mailbox owner's proof, expiry). See README "What a revoked session closes".
 */
export interface BoundSession {
  userId: string
  /** The session's token hash (its primary key); never logged. */
  sessionHash: string
  /** When the session expires (ms since the epoch): what it opened closes then at the latest. */
  expiresAt: number
}

/** The WebSocket close code and reason of a socket whose session ended (4401: a private code, read as HTTP 401). */
export const SESSION_ENDED_CLOSE_CODE = 4401
export const SESSION_ENDED_REASON = 'Session ended'
/** How often what a session opened is checked against the database, in case a notice of its end was lost. */
export const SESSION_RECHECK_MS = 60_000

/** The token hashes among `sessionHashes` that are sessions of `userId`, unexpired, right now (database clock). */
export async function liveSessionHashes(reader: Reader, userId: string, sessionHashes: readonly string[]): Promise<Set<string>> {
  if (!sessionHashes.length) return new Set()
  const rows = await reader.asUser(userId, (db) =>
    db
      .select({ tokenHash: sessions.tokenHash })
      .from(sessions)
      .where(and(eq(sessions.userId, userId), inArray(sessions.tokenHash, [...sessionHashes]), gt(sessions.expiresAt, sql`now()`))),
  )
  return new Set(rows.map((r) => r.tokenHash))
}

/** Answers which of a user's sessions are live: the database in the end (`liveSessionHashes`). */
export type LiveSessions = (userId: string, sessionHashes: readonly string[]) => Promise<Set<string>>

/** A session that was deleted: whose, and which (its token hash). */
export interface EndedSession {
  userId: string
  tokenHash: string
}

/**
 * Deletes sessions in the caller's transaction (or as one statement of a `Reader`) and answers which ended. Every
 * path that ends sessions goes through here, then `afterSessionsEnded` once the deletion has committed.
 * `userIds`: those users' sessions; `keep` spares one (the caller's, by token hash); `only` ends just that one.
 */
export function deleteSessions(tx: Db, which: { userIds?: readonly string[]; keep?: string; only?: string }) {
  if (!which.userIds && !which.only) throw new Error('deleteSessions needs users or a session')
  const where = and(
    which.userIds ? (which.userIds.length ? inArray(sessions.userId, [...which.userIds]) : sql`false`) : undefined,
    which.keep ? ne(sessions.tokenHash, which.keep) : undefined,
    which.only ? eq(sessions.tokenHash, which.only) : undefined,
  )
  return tx.delete(sessions).where(where).returning({ userId: sessions.userId, tokenHash: sessions.tokenHash })
}

/** Something in this process holding what sessions opened (the Node permission hub, the Node log streams). */
export interface SessionBoundHolder {
  /** Closes what the listed sessions of `userId` opened; answers how many. */
  endSessions(userId: string, sessionHashes: readonly string[]): number
}

const holders = new WeakMap<object, Set<SessionBoundHolder>>()

/** Registers a holder under the services object it serves (one per Node process, or test harness). */
export function registerSessionBoundHolder(services: object, holder: SessionBoundHolder) {
  let set = holders.get(services)
  if (!set) holders.set(services, (set = new Set()))
  set.add(holder)
}

/**
 * The Durable Object bindings whose objects, one per user, hold what sessions opened on Workers (the permission
 * sockets, the log streams). Each answers `POST /sessions-ended` `{userId, sessionHashes}` by closing those.
 */
export const SESSION_BOUND_BINDINGS = ['PERMISSION_SOCKETS', 'LOG_TAILS'] as const
export const SESSIONS_ENDED_PATH = '/sessions-ended'

/** The body of `POST /sessions-ended` to a user's Durable Object. */
export interface SessionsEndedNotice {
  userId: string
  sessionHashes: string[]
}

interface Namespace {
  idFromName(name: string): unknown
  get(id: unknown): { fetch(input: string, init?: RequestInit): Promise<Response> }
}

/** Groups ended sessions by user. */
function byUser(ended: readonly EndedSession[]) {
  const out = new Map<string, string[]>()
  for (const e of ended) {
    const list = out.get(e.userId)
    if (list) list.push(e.tokenHash)
    else out.set(e.userId, [e.tokenHash])
  }
  return out
}

/**
 * After sessions ended (their deletion committed): every cached copy of them is stale from the next request on,
 * and what they opened closes now: in this process (Node) and in each user's Durable Objects (Workers, when this
 * Worker has their bindings). A Durable Object that misses the notice learns it at its next check
 * (`SESSION_RECHECK_MS`), and every decision on a socket is checked against the database anyway. `alsoStale`
 * names users whose cached sessions must be re-read although none ended (their account changed).
 */
export async function afterSessionsEnded(c: AppContext, ended: readonly EndedSession[], alsoStale: readonly string[] = []) {
  const { services } = c.var
  const grouped = byUser(ended)
  await expireCachedSessions(services, ...new Set([...grouped.keys(), ...alsoStale]))
  if (!grouped.size) return
  let closed = 0
  for (const holder of holders.get(services) ?? []) for (const [userId, hashes] of grouped) closed += holder.endSessions(userId, hashes)
  const env = (c.env ?? {}) as Record<string, unknown>
  const notices: Promise<void>[] = []
  for (const binding of SESSION_BOUND_BINDINGS) {
    const ns = env[binding] as Namespace | undefined
    if (!ns || typeof ns.idFromName !== 'function') continue
    for (const [userId, sessionHashes] of grouped) notices.push(notify(ns, binding, { userId, sessionHashes }))
  }
  await Promise.all(notices)
  if (closed) log.info('session.opened_closed', { users: grouped.size, closed })
}

async function notify(ns: Namespace, binding: string, notice: SessionsEndedNotice) {
  try {
    const res = await ns.get(ns.idFromName(notice.userId)).fetch(`https://session-bound.internal${SESSIONS_ENDED_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(notice),
    })
    if (!res.ok) throw new Error(`answered ${res.status}`)
    await res.arrayBuffer()
  } catch (e) {
    // The object's own check closes them within SESSION_RECHECK_MS.
    log.warn('session.close_notice_failed', { binding, userId: notice.userId, ...errorFields(e) })
  }
}

/** Parses a `POST /sessions-ended` body; null when malformed. */
export function parseSessionsEnded(value: unknown): SessionsEndedNotice | null {
  const v = value as Partial<SessionsEndedNotice> | null
  if (!v || typeof v.userId !== 'string' || !Array.isArray(v.sessionHashes) || !v.sessionHashes.every((h) => typeof h === 'string')) return null
  return { userId: v.userId, sessionHashes: v.sessionHashes }
}

interface Held<T> {
  item: T
  session: BoundSession
  close: () => void
}

/**
 * Things held open by sessions, per user (the Node permission sockets, log streams on Node and in the user's
 * Durable Object): closes them when their session ends (`endSessions`, told by whoever ended it), when it
 * expires, or when the periodic check finds it gone from the database (a notice that never came). The check
 * runs every `SESSION_RECHECK_MS` while something is held.
 */
export class SessionBoundSet<T> implements SessionBoundHolder {
  private readonly byUser = new Map<string, Map<T, Held<T>>>()
  private timer: ReturnType<typeof setInterval> | null = null

  constructor(
    private readonly live: LiveSessions,
    private readonly now: () => number = () => Date.now(),
  ) {}

  add(item: T, session: BoundSession, close: () => void) {
    let mine = this.byUser.get(session.userId)
    if (!mine) this.byUser.set(session.userId, (mine = new Map()))
    mine.set(item, { item, session, close })
    this.startTimer()
  }

  /** Forgets `item` (it closed by itself); true when it was held. */
  remove(userId: string, item: T) {
    const mine = this.byUser.get(userId)
    const had = !!mine?.delete(item)
    if (mine && mine.size === 0) this.byUser.delete(userId)
    if (!this.byUser.size) this.stopTimer()
    return had
  }

  count(userId: string) {
    return this.byUser.get(userId)?.size ?? 0
  }

  /** The user's items whose session has not expired; expired ones are closed on the way. */
  items(userId: string): T[] {
    const now = this.now()
    const out: T[] = []
    for (const held of [...(this.byUser.get(userId)?.values() ?? [])]) {
      if (held.session.expiresAt <= now) this.closeHeld(held)
      else out.push(held.item)
    }
    return out
  }

  /** The session `item` was opened with (undefined when not held). */
  sessionOf(userId: string, item: T) {
    return this.byUser.get(userId)?.get(item)?.session
  }

  endSessions(userId: string, sessionHashes: readonly string[]) {
    const ended = new Set(sessionHashes)
    let n = 0
    for (const held of [...(this.byUser.get(userId)?.values() ?? [])]) {
      if (ended.has(held.session.sessionHash)) {
        this.closeHeld(held)
        n++
      }
    }
    return n
  }

  /** Closes what an expired or deleted session holds; answers how many. A user whose check fails keeps theirs until the next one. */
  async recheck(): Promise<number> {
    let n = 0
    const now = this.now()
    for (const [userId, mine] of [...this.byUser]) {
      const held = [...mine.values()]
      for (const h of held.filter((x) => x.session.expiresAt <= now)) {
        this.closeHeld(h)
        n++
      }
      const rest = held.filter((x) => x.session.expiresAt > now)
      if (!rest.length) continue
      let live: Set<string>
      try {
        live = await this.live(userId, [...new Set(rest.map((x) => x.session.sessionHash))])
      } catch (e) {
        log.warn('session.recheck_failed', { userId, ...errorFields(e) })
        continue
      }
      for (const h of rest) {
        if (!live.has(h.session.sessionHash)) {
          this.closeHeld(h)
          n++
        }
      }
    }
    return n
  }

  private closeHeld(held: Held<T>) {
    this.remove(held.session.userId, held.item)
    try {
      held.close()
    } catch (e) {
      log.warn('session.bound_close_failed', errorFields(e))
    }
  }

  private startTimer() {
    if (this.timer) return
    this.timer = setInterval(() => void this.recheck(), SESSION_RECHECK_MS)
    // Node: the check never keeps the process alive on its own.
    ;(this.timer as { unref?: () => void }).unref?.()
  }

  private stopTimer() {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
  }
}
