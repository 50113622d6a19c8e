import type { LogLine, RuntimeProvider, RuntimeTarget } from '../runtime/provider'
import { RuntimeProviderError } from '../runtime/provider'
import { errorFields, log } from '../log'

/** Lines a tail keeps for `history` and for clients that join late (spec "Limits": log buffer 500 lines). */
export const LOG_BUFFER_LINES = 500
/** How long a tail outlives its last client (spec "Live log tail": 30 s grace). */
export const LOG_TAIL_GRACE_MS = 30_000
/** Events a slow client may fall behind by before it is dropped (it reconnects and is replayed the buffer). */
export const MAX_CLIENT_BACKLOG = 2 * LOG_BUFFER_LINES

/** One server-sent event of the tail (spec "Events": `connected`, `line`, `exit`; data `{type, agentId, text, code}`). */
export interface LogEvent {
  type: 'connected' | 'line' | 'exit'
  agentId: string
  /** The log line (`line`), or what happened (`connected`, `exit`). */
  text: string
  /** `exit` only: 0 when the tail was stopped or the runtime's log stream ended, 1 when reading it failed. */
  code: number | null
}

/** A buffered line as `history` returns it. */
export interface BufferedLine {
  timestamp: string
  stream: LogLine['stream']
  text: string
}

export type LogSource = (signal: AbortSignal) => AsyncIterable<LogLine>
export type LogListener = (event: LogEvent) => void

export interface LogTailOptions {
  graceMs?: number
  bufferLines?: number
  /** Called once when the tail has ended (stopped, grace over, or the source ended); the registry forgets it. */
  onEnd?: () => void
}

export interface TailStatus {
  agentId: string
  clients: number
  bufferedLines: number
  startedAt: string
}

/**
 * One agent's live log tail: reads its runtime's log stream once (whatever number of clients watch), keeps the
 * last `bufferLines` lines in a ring buffer, fans every line out to the connected clients, and ends `graceMs` after
 * the last client leaves (a client that comes back within the grace finds it still running). Plain web-standard
 * code: the same class runs in Node (the in-process registry) and in a Durable Object (one per agent on Workers).
 */
export class LogTail {
  readonly startedAt = new Date()
  private readonly buffer: BufferedLine[] = []
  private readonly clients = new Set<LogListener>()
  private readonly abort = new AbortController()
  private grace: ReturnType<typeof setTimeout> | null = null
  private endedWith: LogEvent | null = null
  private readonly graceMs: number
  private readonly bufferLines: number

  constructor(
    readonly agentId: string,
    source: LogSource,
    private readonly opts: LogTailOptions = {},
  ) {
    this.graceMs = opts.graceMs ?? LOG_TAIL_GRACE_MS
    this.bufferLines = opts.bufferLines ?? LOG_BUFFER_LINES
    // No client yet: the grace runs from the start, so a tail nobody joins does not read forever.
    this.armGrace()
    void this.read(source)
  }

  get ended() {
    return this.endedWith !== null
  }

  /** The buffered lines, oldest first (at most `bufferLines`). */
  history(): BufferedLine[] {
    return [...this.buffer]
  }

  status(): TailStatus {
    return { agentId: this.agentId, clients: this.clients.size, bufferedLines: this.buffer.length, startedAt: this.startedAt.toISOString() }
  }

  /**
   * Adds a client: it gets `connected`, the buffered lines, then every new line, and `exit` when the tail ends.
   * Returns the function that removes it; the last one leaving starts the grace.
   */
  subscribe(listener: LogListener): () => void {
    listener(this.event('connected', 'Connected to the log stream'))
    for (const l of this.buffer) listener(this.event('line', l.text))
    if (this.endedWith) {
      listener(this.endedWith)
      return () => {}
    }
    this.clients.add(listener)
    this.disarmGrace()
    return () => {
      if (!this.clients.delete(listener)) return
      if (this.clients.size === 0 && !this.ended) this.armGrace()
    }
  }

  /** Ends the tail now: every client gets `exit` (code 0) and its stream closes. */
  stop(text = 'Log tail stopped') {
    this.end(this.event('exit', text, 0))
  }

  private async read(source: LogSource) {
    try {
      for await (const line of source(this.abort.signal)) {
        if (this.ended) return
        const buffered = { timestamp: line.timestamp, stream: line.stream, text: line.line }
        this.buffer.push(buffered)
        if (this.buffer.length > this.bufferLines) this.buffer.shift()
        const event = this.event('line', buffered.text)
        for (const client of [...this.clients]) client(event)
      }
      this.end(this.event('exit', 'Log stream ended', 0))
    } catch (e) {
      if (this.ended) return
      log.warn('log_tail.source_failed', { agentId: this.agentId, ...errorFields(e) })
      const text = e instanceof RuntimeProviderError ? `Log stream failed: ${e.message}` : 'Log stream failed'
      this.end(this.event('exit', text, 1))
    }
  }

  private end(event: LogEvent) {
    if (this.endedWith) return
    this.endedWith = event
    this.disarmGrace()
    this.abort.abort()
    const clients = [...this.clients]
    this.clients.clear()
    for (const client of clients) client(event)
    this.opts.onEnd?.()
  }

  private armGrace() {
    this.disarmGrace()
    this.grace = setTimeout(() => this.end(this.event('exit', 'No clients left', 0)), this.graceMs)
  }

  private disarmGrace() {
    if (this.grace) clearTimeout(this.grace)
    this.grace = null
  }

  private event(type: LogEvent['type'], text: string, code: number | null = null): LogEvent {
    return { type, agentId: this.agentId, text, code }
  }
}

export interface LogTailRegistryOptions {
  graceMs?: number
  bufferLines?: number
}

/**
 * The live tails of one process (Node) or of one Durable Object (Workers, where it holds one agent's tail),
 * keyed by agent: at most one tail, hence one read of the runtime's logs, per agent.
 */
export class LogTailRegistry {
  private readonly tails = new Map<string, LogTail>()

  constructor(
    private readonly runtimes: Pick<RuntimeProvider, 'logs'>,
    /** Tests shorten the grace. */
    public options: LogTailRegistryOptions = {},
  ) {}

  /** The agent's running tail, started on the runtime's log stream if there is none. */
  open(target: RuntimeTarget): LogTail {
    const running = this.tails.get(target.agentId)
    if (running && !running.ended) return running
    const tail: LogTail = new LogTail(target.agentId, (signal) => this.runtimes.logs(target, { signal }), {
      ...this.options,
      onEnd: () => {
        if (this.tails.get(target.agentId) === tail) this.tails.delete(target.agentId)
      },
    })
    this.tails.set(target.agentId, tail)
    return tail
  }

  get(agentId: string): LogTail | null {
    return this.tails.get(agentId) ?? null
  }

  /** Ends the agent's tail (its clients get `exit`); false when it had none. */
  stop(agentId: string): boolean {
    const tail = this.tails.get(agentId)
    if (!tail) return false
    tail.stop()
    return true
  }

  /** The running tails among `agentIds`. */
  active(agentIds: Iterable<string>): TailStatus[] {
    const out: TailStatus[] = []
    for (const id of agentIds) {
      const tail = this.tails.get(id)
      if (tail && !tail.ended) out.push(tail.status())
    }
    return out
  }
}

const registries = new WeakMap<object, LogTailRegistry>()

/**
 * The in-process registry for a runtime provider (Node: the server's one provider, so one registry per server
 * and per test harness). State keyed by the provider object, not a module-global connection: on Workers the
 * provider is per request, which is why Workers use the Durable Object instead (functions/logs/durable.ts).
 */
export function logTails(runtimes: RuntimeProvider): LogTailRegistry {
  let registry = registries.get(runtimes)
  if (!registry) registries.set(runtimes, (registry = new LogTailRegistry(runtimes)))
  return registry
}
