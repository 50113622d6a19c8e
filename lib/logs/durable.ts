import { Hono } from 'hono'
import { parseConfig } from '../config'
import { ApiError, onError } from '../http/errors'
import type { RuntimeProvider, RuntimeTarget } from '../runtime/provider'
import { railwayStore } from '../services/stores/railway'
import { TARGET_HEADER } from './backend'
import { streamTail } from './sse'
import { LogTailRegistry } from './tail'

/**
 * The log tail Durable Object (Workers): one object per agent (`idFromName(agentId)`) owns that agent's tail,
 * so every client of the agent, whichever isolate it reached, shares one read of the runtime's logs, one buffer
 * and one grace timer. The same `LogTailRegistry` as in Node, holding one agent. Only the logs Worker calls it,
 * after checking the session and ownership; it is not routable from outside.
 *
 * Written against the module-worker Durable Object interface (`constructor(state, env)`, `fetch(request)`),
 * so it needs no `cloudflare:workers` import and type-checks under Node.
 */
export class LogTailObject {
  private registry: LogTailRegistry | null = null
  private readonly app = new Hono()

  constructor(
    _state: unknown,
    private readonly env: Record<string, unknown>,
    /** Tests and other hosts pass their provider; on Workers it is Railway from the env. */
    private readonly provider?: RuntimeProvider,
  ) {
    this.app.onError(onError)
    this.app.get('/:agentId/stream', (c) => {
      const target = parseTarget(c.req.header(TARGET_HEADER), c.req.param('agentId'))
      return streamTail(c, this.tails().open(target))
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

function parseTarget(raw: string | undefined, agentId: string): RuntimeTarget {
  let parsed: Partial<RuntimeTarget> | null = null
  try {
    parsed = raw ? (JSON.parse(raw) as Partial<RuntimeTarget>) : null
  } catch {
    parsed = null
  }
  if (!parsed || parsed.agentId !== agentId || typeof parsed.name !== 'string') {
    throw new ApiError(400, 'Invalid log tail target', { code: 'VALIDATION' })
  }
  return { agentId, name: parsed.name, serviceId: parsed.serviceId ?? null, url: parsed.url ?? null, gatewayToken: null }
}
