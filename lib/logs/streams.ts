import { type BoundSession, type LiveSessions, SessionBoundSet } from '../auth/session-bound'
import { ApiError } from '../http/errors'

/** Live log streams (`GET /api/logs/:agentId/stream`) one user may hold open at once, over every agent. */
export const MAX_LOG_STREAMS_PER_USER = 5
/** What a refused stream is told to wait (`Retry-After`): a slot frees when one of the user's streams closes. */
export const LOG_STREAM_RETRY_AFTER_SEC = 10
/** The text of the `exit` event a stream sends when the session that opened it ends. */
export const SESSION_ENDED_EXIT = 'Session ended: sign in again'

/** One open stream's place in the count, and the way its session's end reaches it. */
export class StreamSlot {
  private ender: ((text: string) => void) | null = null
  private endedWith: string | null = null
  private released = false

  constructor(private readonly onRelease: () => void) {}

  /** How the stream ends when its session does (at once if it already has). */
  whenEnded(fn: (text: string) => void) {
    this.ender = fn
    if (this.endedWith !== null) fn(this.endedWith)
  }

  end(text: string) {
    this.endedWith ??= text
    this.ender?.(text)
  }

  /** The stream closed, for whatever reason: its place is free. */
  release() {
    if (this.released) return
    this.released = true
    this.onRelease()
  }
}

/**
 * The open log streams of some users (Node: the process's; Workers: one user's Durable Object), each bound to
 * the session that opened it: at most `MAX_LOG_STREAMS_PER_USER` per user, and a stream ends (an `exit` event,
 * then the stream closes) when its session does (lib/auth/session-bound.ts).
 */
export class UserLogStreams {
  private readonly held: SessionBoundSet<StreamSlot>

  constructor(live: LiveSessions, now: () => number = () => Date.now()) {
    this.held = new SessionBoundSet(live, now)
  }

  /** A slot for a new stream of `session`'s user, or 429 `RATE_LIMITED` when they hold the most already. */
  take(session: BoundSession): StreamSlot {
    // Expired sessions' streams are closed first: they do not count.
    if (this.held.items(session.userId).length >= MAX_LOG_STREAMS_PER_USER) throw tooManyStreams()
    const slot: StreamSlot = new StreamSlot(() => this.held.remove(session.userId, slot))
    this.held.add(slot, session, () => slot.end(SESSION_ENDED_EXIT))
    return slot
  }

  count(userId: string) {
    return this.held.count(userId)
  }

  endSessions(userId: string, sessionHashes: readonly string[]) {
    return this.held.endSessions(userId, sessionHashes)
  }

  recheckSessions() {
    return this.held.recheck()
  }
}

export const tooManyStreams = () =>
  new ApiError('RATE_LIMITED', { message: `Too many open log streams: at most ${MAX_LOG_STREAMS_PER_USER} at once; close one first`, headers: {
      'RateLimit-Limit': String(MAX_LOG_STREAMS_PER_USER),
      'RateLimit-Remaining': '0',
      'RateLimit-Reset': String(LOG_STREAM_RETRY_AFTER_SEC),
      'Retry-After': String(LOG_STREAM_RETRY_AFTER_SEC),
    } })
