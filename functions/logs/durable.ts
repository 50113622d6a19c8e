import { Hono } from 'hono'
import { type BoundSession, type LiveSessions, liveSessionHashes, parseSessionsEnded, SESSIONS_ENDED_PATH } from '../../lib/auth/session-bound'
import { parseConfig } from '../../lib/config'
import { ApiError, onError } from '../../lib/http/errors'
import type { RuntimeProvider, RuntimeTarget } from '../../lib/runtime/provider'
import { neonStore } from '../../lib/services/stores/neon'
import { railwayStore } from '../../lib/services/stores/railway'
import { SESSION_HEADER, TARGET_HEADER } from '../../lib/logs/backend'
import { streamTail } from '../../lib/logs/sse'
import { UserLogStreams } from '../../lib/logs/streams'
import { LogTailRegistry } from '../../lib/logs/tail'

/**
 * The log tail Durable Object (Workers): one object per user (`idFromName(userId)`) owns the tails of that user's
 * agents, so every client of an agent, whichever isolate it reached, shares one read of the runtime's logs, one
 * buffer and one grace timer; and it counts the user's open streams (at most `MAX_LOG_STREAMS_PER_USER`). The
 * same `LogTailRegistry` and `UserLogStreams` as in Node. Only the logs Worker calls it, after checking the
 * session and ownership; it is not routable from outside.
 *
 * Each stream is bound to the session that opened it: `POST /sessions-ended` (sent by whatever ended sessions,
 * lib/auth/session-bound.ts) ends theirs at once, and while streams are open they are checked against the
 * database every `SESSION_RECHECK_MS` (a notice that never came) and end when their session expires.
 *
 * Written against the module-worker Durable Object interface (`constructor(state, env)`, `fetch(request)`),
 * so it needs no `cloudflare:workers` import and type-checks under Node.
 */
export class LogTailObject {
  private registry: LogTailRegistry | null = null
  private readonly app = new Hono()
  readonly streams: UserLogStreams

  constructor(
    _state: unknown,
    private readonly env: Record<string, unknown>,
    /** Tests and other hosts pass their provider; on Workers it is Railway from the env. */
    private readonly provider?: RuntimeProvider,
    /** Tests and other hosts pass their own; on Workers the database comes from the env (Neon). */
    live: LiveSessions = (userId, hashes) => liveOnNeon(env, userId, hashes),
  ) {
    this.streams = new UserLogStreams(live)
    this.app.onError(onError)
    this.app.post(SESSIONS_ENDED_PATH, async (c) => {
      const notice = parseSessionsEnded(await c.req.json().catch(() => null))
      if (!notice) throw new ApiError('VALIDATION', 'Expected {userId, sessionHashes}')
      return c.json({ closed: this.streams.endSessions(notice.userId, notice.sessionHashes) })
    })
    this.app.get('/:agentId/stream', (c) => {
      const target = parseTarget(c.req.header(TARGET_HEADER), c.req.param('agentId'))
      const slot = this.streams.take(parseSession(c.req.header(SESSION_HEADER)))
      return streamTail(c, this.tails().open(target), slot)
    })
    this.app.get('/:agentId/history', (c) => {
      const tail = this.registry?.get(c.req.param('agentId'))
      return c.json({ active: !!tail && !tail.ended, lines: tail?.history() ?? [] })
    })
    this.app.post('/:agentId/stop', (c) => c.json({ stopped: this.registry?.stop(c.req.param('agentId')) ?? false }))
    this.app.get('/:agentId/status', (c) => c.json({ tail: this.registry?.active([c.req.param('agentId')])[0] ?? null }))
  }

  fetch(request: Request): Promise<Response> | Response {
    return this.app.fetch(request)
  }

  private tails() {
    return (this.registry ??= new LogTailRegistry(this.provider ?? railwayStore(parseConfig(this.env))))
  }
}

function parseSession(raw: string | undefined): BoundSession {
  let v: Partial<BoundSession> | null = null
  try {
    v = raw ? (JSON.parse(raw) as Partial<BoundSession>) : null
  } catch {
    v = null
  }
  if (!v || typeof v.userId !== 'string' || typeof v.sessionHash !== 'string' || !v.sessionHash || typeof v.expiresAt !== 'number') {
    throw new ApiError('VALIDATION', 'Invalid log stream session')
  }
  return { userId: v.userId, sessionHash: v.sessionHash, expiresAt: v.expiresAt }
}

async function liveOnNeon(env: Record<string, unknown>, userId: string, sessionHashes: readonly string[]) {
  const store = neonStore(parseConfig(env))
  try {
    return await liveSessionHashes(store.reader, userId, sessionHashes)
  } finally {
    await store.close()
  }
}

function parseTarget(raw: string | undefined, agentId: string): RuntimeTarget {
  let parsed: Partial<RuntimeTarget> | null = null
  try {
    parsed = raw ? (JSON.parse(raw) as Partial<RuntimeTarget>) : null
  } catch {
    parsed = null
  }
  if (!parsed || parsed.agentId !== agentId || typeof parsed.name !== 'string') {
    throw new ApiError('VALIDATION', 'Invalid log tail target')
  }
  return { agentId, name: parsed.name, serviceId: parsed.serviceId ?? null, url: parsed.url ?? null, gatewayToken: null }
}
