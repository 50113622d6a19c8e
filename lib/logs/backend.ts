import type { Context } from 'hono'
import type { AppContext } from '../context'
import type { RuntimeProvider, RuntimeTarget } from '../runtime/provider'
import { streamTail } from './sse'
import { type BufferedLine, logTails, type TailStatus } from './tail'

/** The binding name of the log tail Durable Object namespace (wrangler.toml `[env.logs]`). */
export const LOG_TAILS_BINDING = 'LOG_TAILS'

/** What the routes need from wherever the tails live: the in-process registry, or one Durable Object per agent. */
export interface LogTailBackend {
  /** The agent's SSE stream, its tail started if none runs. */
  stream(c: Context, target: RuntimeTarget): Promise<Response>
  history(agentId: string): Promise<{ active: boolean; lines: BufferedLine[] }>
  stop(agentId: string): Promise<boolean>
  /** The running tails among `agentIds`. */
  active(agentIds: string[]): Promise<TailStatus[]>
}

/** The parts of a Durable Object namespace binding used here (workerd's `DurableObjectNamespace`). */
export interface DurableNamespaceLike {
  idFromName(name: string): unknown
  get(id: unknown): { fetch(input: string, init?: RequestInit): Promise<Response> }
}

/** The target as it travels to the Durable Object: never the gateway token (log reading does not use it). */
export const TARGET_HEADER = 'x-log-target'

/** In-process tails (Node: `npm start`, tests), one registry per runtime provider. */
export function localBackend(runtimes: RuntimeProvider): LogTailBackend {
  const registry = logTails(runtimes)
  return {
    async stream(c, target) {
      return streamTail(c, registry.open(target))
    },
    async history(agentId) {
      const tail = registry.get(agentId)
      return { active: !!tail && !tail.ended, lines: tail?.history() ?? [] }
    },
    async stop(agentId) {
      return registry.stop(agentId)
    },
    async active(agentIds) {
      return registry.active(agentIds)
    },
  }
}

/** One Durable Object per agent owns its tail (lib/logs/durable.ts); each call forwards to it. */
export function durableBackend(ns: DurableNamespaceLike): LogTailBackend {
  const call = async (agentId: string, op: 'stream' | 'history' | 'stop' | 'status', init: RequestInit = {}) => {
    const stub = ns.get(ns.idFromName(agentId))
    return stub.fetch(`https://log-tail.internal/${encodeURIComponent(agentId)}/${op}`, init)
  }
  const json = async <T>(res: Response): Promise<T> => {
    if (!res.ok) throw new Error(`log tail object answered ${res.status}`)
    return (await res.json()) as T
  }
  return {
    async stream(_c, target) {
      const res = await call(target.agentId, 'stream', { headers: { [TARGET_HEADER]: JSON.stringify({ ...target, gatewayToken: null }) } })
      // The object's own answer (its SSE body, or its `{error, code}`), re-wrapped: fetched headers are immutable.
      return new Response(res.body, res)
    },
    async history(agentId) {
      return json(await call(agentId, 'history'))
    },
    async stop(agentId) {
      return (await json<{ stopped: boolean }>(await call(agentId, 'stop', { method: 'POST' }))).stopped
    },
    async active(agentIds) {
      const statuses = await Promise.all(agentIds.map(async (id) => json<{ tail: TailStatus | null }>(await call(id, 'status'))))
      return statuses.flatMap((s) => (s.tail ? [s.tail] : []))
    },
  }
}

/** The Durable Object namespace when this Worker has the binding, else the in-process registry. */
export function logTailBackend(c: AppContext): LogTailBackend {
  const ns = (c.env as Record<string, unknown> | undefined)?.[LOG_TAILS_BINDING] as DurableNamespaceLike | undefined
  return ns && typeof ns.idFromName === 'function' ? durableBackend(ns) : localBackend(c.var.services.runtimes)
}
