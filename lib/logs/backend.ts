import type { Context } from 'hono'
import { type BoundSession, liveSessionHashes, registerSessionBoundHolder } from '../auth/session-bound'
import type { AppContext, Services } from '../context'
import type { RuntimeTarget } from '../runtime/provider'
import { streamTail } from './sse'
import { UserLogStreams } from './streams'
import { type BufferedLine, logTails, type TailStatus } from './tail'

/** The binding name of the log tail Durable Object namespace (wrangler.toml `[env.logs]`). */
export const LOG_TAILS_BINDING = 'LOG_TAILS'

/**
 * What the routes need from wherever the tails live: the in-process registry, or one Durable Object per user
 * (holding that user's agents' tails and streams). `userId` is the agents' owner.
 */
export interface LogTailBackend {
  /**
   * The agent's SSE stream, its tail started if none runs; bound to `session` (it ends when the session does).
   * 429 `RATE_LIMITED` when the user already holds `MAX_LOG_STREAMS_PER_USER` streams.
   */
  stream(c: Context, target: RuntimeTarget, session: BoundSession): Promise<Response>
  history(userId: string, agentId: string): Promise<{ active: boolean; lines: BufferedLine[] }>
  stop(userId: string, agentId: string): Promise<boolean>
  /** The running tails among `agentIds`. */
  active(userId: string, agentIds: string[]): Promise<TailStatus[]>
}

/** The parts of a Durable Object namespace binding used here (workerd's `DurableObjectNamespace`). */
export interface DurableNamespaceLike {
  idFromName(name: string): unknown
  get(id: unknown): { fetch(input: string, init?: RequestInit): Promise<Response> }
}

/** The target as it travels to the Durable Object: never the gateway token (log reading does not use it). */
export const TARGET_HEADER = 'x-log-target'
/** The session a stream is bound to, as it travels to the Durable Object: JSON `BoundSession`. */
export const SESSION_HEADER = 'x-log-session'

const streamCounts = new WeakMap<Services, UserLogStreams>()

/** The process's open log streams (Node), per set of services (one per server or test harness). */
export function localLogStreams(services: Services): UserLogStreams {
  let streams = streamCounts.get(services)
  if (!streams) {
    streams = new UserLogStreams((userId, hashes) => liveSessionHashes(services.reader, userId, hashes))
    streamCounts.set(services, streams)
    registerSessionBoundHolder(services, streams)
  }
  return streams
}

/** In-process tails (Node: `npm start`, tests), one registry per runtime provider, streams counted per user. */
export function localBackend(services: Services): LogTailBackend {
  const registry = logTails(services.runtimes)
  const streams = localLogStreams(services)
  return {
    async stream(c, target, session) {
      const slot = streams.take(session)
      return streamTail(c, registry.open(target), slot)
    },
    async history(_userId, agentId) {
      const tail = registry.get(agentId)
      return { active: !!tail && !tail.ended, lines: tail?.history() ?? [] }
    },
    async stop(_userId, agentId) {
      return registry.stop(agentId)
    },
    async active(_userId, agentIds) {
      return registry.active(agentIds)
    },
  }
}

/** One Durable Object per user owns that user's tails and streams (functions/logs/durable.ts); each call forwards to it. */
export function durableBackend(ns: DurableNamespaceLike): LogTailBackend {
  const call = async (userId: string, agentId: string, op: 'stream' | 'history' | 'stop' | 'status', init: RequestInit = {}) => {
    const stub = ns.get(ns.idFromName(userId))
    return stub.fetch(`https://log-tail.internal/${encodeURIComponent(agentId)}/${op}`, init)
  }
  const json = async <T>(res: Response): Promise<T> => {
    if (!res.ok) throw new Error(`log tail object answered ${res.status}`)
    return (await res.json()) as T
  }
  return {
    async stream(_c, target, session) {
      const res = await call(session.userId, target.agentId, 'stream', {
        headers: { [TARGET_HEADER]: JSON.stringify({ ...target, gatewayToken: null }), [SESSION_HEADER]: JSON.stringify(session) },
      })
      // The object's own answer (its SSE body, or its `{error, code}`), re-wrapped: fetched headers are immutable.
      return new Response(res.body, res)
    },
    async history(userId, agentId) {
      return json(await call(userId, agentId, 'history'))
    },
    async stop(userId, agentId) {
      return (await json<{ stopped: boolean }>(await call(userId, agentId, 'stop', { method: 'POST' }))).stopped
    },
    async active(userId, agentIds) {
      const statuses = await Promise.all(agentIds.map(async (id) => json<{ tail: TailStatus | null }>(await call(userId, id, 'status'))))
      return statuses.flatMap((s) => (s.tail ? [s.tail] : []))
    },
  }
}

/** The Durable Object namespace when this Worker has the binding, else the in-process registry. */
export function logTailBackend(c: AppContext): LogTailBackend {
  const ns = (c.env as Record<string, unknown> | undefined)?.[LOG_TAILS_BINDING] as DurableNamespaceLike | undefined
  return ns && typeof ns.idFromName === 'function' ? durableBackend(ns) : localBackend(c.var.services)
}
