import { type ChildProcess, spawn } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { log } from '../lib/log'
import { httpGateway } from '../lib/runtime/gateway'
import {
  type CreatedRuntime,
  type LogLine,
  type RuntimeGateway,
  type RuntimeProvider,
  RuntimeProviderError,
  type RuntimeSpec,
  type RuntimeTarget,
} from '../lib/runtime/provider'

/**
 * The local runtime provider, the embedded default of `npm start`: one real runtime process per agent
 * (infra/runtime/main.ts under `node --import tsx`) on its own loopback port, its /data volume at
 * `<dataDir>/runtimes/<agentId>/data` and what the provider needs to start it again (port, image, env: never
 * the token) in `<dataDir>/runtimes/<agentId>/runtime.json`.
 *
 * The child gets only the env the runtime needs (the spec's env, PATH, and its own settings), never the
 * server's. Children never outlive the server: `close()` ends them; a server that exits without calling it
 * kills them in its exit hook; one killed outright closes their stdin pipe, on which they end themselves.
 */
export interface LocalRuntimeProviderOptions {
  /** The server's data directory; runtimes live under `<dataDir>/runtimes/`. */
  dataDir: string
  /** Version the runtimes report when the spec's env sets none. */
  runtimeVersion?: string
  /** How long a new runtime's `/readyz` says not ready (its `starting` phase); the runtime's default is 300 ms. */
  readyDelayMs?: number
  /** How long create/start wait for the process to listen. */
  startTimeoutMs?: number
}

interface Meta {
  agentId: string
  name: string
  image: string
  port: number
  env: Record<string, string>
}

interface Entry {
  meta: Meta
  dir: string
  token: string | null
  child: ChildProcess | null
  exited: Promise<void> | null
  history: LogLine[]
  /** The tail of this runtime's operations (start, stop, ...), which run one after another. */
  queue: Promise<void>
  /** Live log subscribers; `null` ends them (the runtime was deleted or the provider closed). */
  listeners: Set<(line: LogLine | null) => void>
}

const MAIN = fileURLToPath(new URL('./runtime/main.ts', import.meta.url))
const ROOT = fileURLToPath(new URL('..', import.meta.url))
const HISTORY_LINES = 500
const MAX_LINE = 16 * 1024
const MAX_PENDING = 5000
const STOP_GRACE_MS = 5000
const AGENT_ID = /^[A-Za-z0-9_-]{1,100}$/
// What the spec's env may never set: the runtime's own settings, and what would change how node itself runs.
const RESERVED_ENV = /^(PORT|HOST|GATEWAY_TOKEN|AGENT_ID|DATA_DIR|RUNTIME_IMAGE|READY_DELAY_MS|EXIT_WITH_PARENT|PATH|NODE_.*|LD_.*|DYLD_.*)$/

// Every live child of every provider in this process, killed in the exit hook if nobody closed them.
const liveChildren = new Set<ChildProcess>()
let exitHookInstalled = false
function trackChild(child: ChildProcess) {
  if (!exitHookInstalled) {
    exitHookInstalled = true
    process.on('exit', () => {
      for (const c of liveChildren) c.kill('SIGKILL')
    })
  }
  liveChildren.add(child)
  child.once('exit', () => liveChildren.delete(child))
}

export class LocalRuntimeProvider implements RuntimeProvider {
  readonly kind = 'local' as const
  private entries = new Map<string, Entry>()
  private closed = false

  constructor(private opts: LocalRuntimeProviderOptions) {}

  async create(spec: RuntimeSpec): Promise<CreatedRuntime> {
    this.assertOpen()
    if (!AGENT_ID.test(spec.agentId)) throw new RuntimeProviderError('Invalid agent id', 409, 'local')
    if (this.entries.has(spec.agentId) || this.readMeta(spec.agentId)) throw new RuntimeProviderError('Runtime already exists', 409, 'local')
    const env: Record<string, string> = {}
    for (const [k, v] of Object.entries(spec.env)) if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(k) && !RESERVED_ENV.test(k)) env[k] = v
    env.RUNTIME_VERSION ??= this.opts.runtimeVersion ?? '0.0.0-local'
    const dir = this.dirOf(spec.agentId)
    // A port the OS picks; another process may grab it before the child listens, so a few tries.
    let lastError: unknown
    for (let attempt = 0; attempt < 3; attempt++) {
      const meta: Meta = { agentId: spec.agentId, name: spec.name, image: spec.image, port: await freePort(), env }
      const entry: Entry = { meta, dir, token: spec.gatewayToken, child: null, exited: null, history: [], listeners: new Set(), queue: Promise.resolve() }
      mkdirSync(join(dir, 'data'), { recursive: true })
      this.writeMeta(meta)
      this.entries.set(spec.agentId, entry)
      try {
        await this.spawn(entry)
        log.info('local_runtime_created', { agentId: spec.agentId, port: meta.port })
        return { serviceId: `local-${spec.agentId}`, url: urlOf(meta.port) }
      } catch (err) {
        lastError = err
        this.entries.delete(spec.agentId)
        rmSync(dir, { recursive: true, force: true })
        if (!/EADDRINUSE/.test(String((err as Error).message))) break
      }
    }
    throw lastError
  }

  async start(target: RuntimeTarget) {
    const entry = this.entry(target)
    await this.serial(entry, () => this.startEntry(entry, target))
  }

  async stop(target: RuntimeTarget) {
    const entry = this.entry(target)
    await this.serial(entry, () => this.kill(entry))
  }

  async restart(target: RuntimeTarget) {
    const entry = this.entry(target)
    await this.serial(entry, async () => {
      await this.kill(entry)
      await this.startEntry(entry, target)
    })
  }

  async updateImage(target: RuntimeTarget, image: string) {
    const entry = this.entry(target)
    await this.serial(entry, async () => {
      entry.meta.image = image
      this.writeMeta(entry.meta)
      await this.kill(entry)
      await this.startEntry(entry, target)
    })
  }

  /** The watchdog's repair: the process ended or hangs, so it is started afresh from its image and config. */
  async repair(target: RuntimeTarget) {
    await this.restart(target)
  }

  /** The process started afresh with `gatewayToken` in its environment (never written to runtime.json). */
  async rekey(target: RuntimeTarget, gatewayToken: string) {
    const entry = this.entry(target)
    await this.serial(entry, async () => {
      await this.kill(entry)
      await this.startEntry(entry, { ...target, gatewayToken })
    })
  }

  async delete(target: RuntimeTarget) {
    const entry = this.entry(target)
    await this.serial(entry, async () => {
      await this.kill(entry)
      rmSync(entry.dir, { recursive: true, force: true })
      this.entries.delete(entry.meta.agentId)
      for (const l of entry.listeners) l(null)
      log.info('local_runtime_deleted', { agentId: entry.meta.agentId })
    })
  }

  async *logs(target: RuntimeTarget, opts: { signal: AbortSignal }): AsyncIterable<LogLine> {
    const entry = this.entry(target)
    const { signal } = opts
    const pending: LogLine[] = [...entry.history]
    let ended = false
    let wake: (() => void) | null = null
    const listener = (line: LogLine | null) => {
      if (line) {
        pending.push(line)
        if (pending.length > MAX_PENDING) pending.shift()
      } else ended = true
      wake?.()
    }
    const onAbort = () => wake?.()
    entry.listeners.add(listener)
    signal.addEventListener('abort', onAbort)
    try {
      while (!signal.aborted) {
        const line = pending.shift()
        if (line) {
          yield line
          continue
        }
        if (ended) return
        await new Promise<void>((resolve) => (wake = resolve))
        wake = null
      }
    } finally {
      entry.listeners.delete(listener)
      signal.removeEventListener('abort', onAbort)
    }
  }

  gateway(target: RuntimeTarget): RuntimeGateway {
    const entry = this.find(target)
    const url = target.url ?? (entry ? urlOf(entry.meta.port) : null)
    if (!url) throw new RuntimeProviderError('Runtime not found', 404, 'local')
    const token = target.gatewayToken ?? entry?.token
    if (!token) throw new RuntimeProviderError('No gateway token available', 503, 'local')
    return httpGateway(url, token, fetch, target.gatewayTimeoutMs)
  }

  /** The runtime's process id while it runs (diagnostics, tests), else null. */
  pidOf(agentId: string): number | null {
    return this.entries.get(agentId)?.child?.pid ?? null
  }

  /** Ends every runtime process (their data stays); the server calls it on shutdown. */
  async close() {
    this.closed = true
    await Promise.all([...this.entries.values()].map((e) => this.kill(e)))
    for (const e of this.entries.values()) for (const l of e.listeners) l(null)
  }

  /** One operation at a time per runtime: two overlapping starts must not spawn two processes. */
  private serial(entry: Entry, op: () => Promise<void>): Promise<void> {
    const run = entry.queue.then(op)
    entry.queue = run.catch(() => {})
    return run
  }

  private async startEntry(entry: Entry, target: RuntimeTarget) {
    if (entry.child) return
    if (!this.entries.has(entry.meta.agentId)) throw new RuntimeProviderError('Runtime not found', 404, 'local')
    if (target.gatewayToken) entry.token = target.gatewayToken
    if (!(await portFree(entry.meta.port))) {
      throw new RuntimeProviderError(`Port ${entry.meta.port} is taken by another process; delete and create the runtime again`, 409, 'local')
    }
    await this.spawn(entry)
  }

  private assertOpen() {
    if (this.closed) throw new RuntimeProviderError('Local runtime provider is shut down', 503, 'local')
  }

  private dirOf(agentId: string) {
    return join(this.opts.dataDir, 'runtimes', agentId)
  }

  private agentIdOf(target: RuntimeTarget) {
    return target.serviceId?.startsWith('local-') ? target.serviceId.slice('local-'.length) : target.agentId
  }

  /** The runtime in memory, else as recorded on disk by an earlier server; undefined when neither. */
  private find(target: RuntimeTarget): Entry | undefined {
    const agentId = this.agentIdOf(target)
    if (!AGENT_ID.test(agentId)) return undefined
    let entry = this.entries.get(agentId)
    if (!entry) {
      const meta = this.readMeta(agentId)
      if (!meta) return undefined
      entry = { meta, dir: this.dirOf(agentId), token: target.gatewayToken, child: null, exited: null, history: [], listeners: new Set(), queue: Promise.resolve() }
      this.entries.set(agentId, entry)
    }
    return entry
  }

  private entry(target: RuntimeTarget): Entry {
    this.assertOpen()
    const entry = this.find(target)
    if (!entry) throw new RuntimeProviderError('Runtime not found', 404, 'local')
    return entry
  }

  private readMeta(agentId: string): Meta | null {
    try {
      return JSON.parse(readFileSync(join(this.dirOf(agentId), 'runtime.json'), 'utf8')) as Meta
    } catch {
      return null
    }
  }

  private writeMeta(meta: Meta) {
    writeFileSync(join(this.dirOf(meta.agentId), 'runtime.json'), JSON.stringify(meta, null, 2))
  }

  /** Starts the process and resolves once it listens; rejects (502) when it exits or stays silent first. */
  private spawn(entry: Entry): Promise<void> {
    // Checked again here: close() may have run while the caller awaited a free port.
    if (this.closed) return Promise.reject(new RuntimeProviderError('Local runtime provider is shut down', 503, 'local'))
    const { meta } = entry
    const env: Record<string, string> = {
      ...meta.env,
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOST: '127.0.0.1',
      PORT: String(meta.port),
      AGENT_ID: meta.agentId,
      DATA_DIR: join(entry.dir, 'data'),
      RUNTIME_IMAGE: meta.image,
      EXIT_WITH_PARENT: '1',
      ...(entry.token ? { GATEWAY_TOKEN: entry.token } : {}),
      ...(this.opts.readyDelayMs === undefined ? {} : { READY_DELAY_MS: String(this.opts.readyDelayMs) }),
    }
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] })
    trackChild(child)
    entry.child = child
    entry.exited = new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        if (entry.child === child) entry.child = null
        log.info('local_runtime_exited', { agentId: meta.agentId, code, signal })
        resolve()
      })
    })
    // The pipe only tells the child when we are gone; nothing is written to it.
    child.stdin!.on('error', () => {})

    return new Promise<void>((resolve, reject) => {
      let settled = false
      const recent: string[] = []
      const settle = (err?: Error) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        if (err) {
          child.kill('SIGKILL')
          reject(err)
        } else resolve()
      }
      const timeoutMs = this.opts.startTimeoutMs ?? 30_000
      const timer = setTimeout(() => settle(new RuntimeProviderError(`Runtime did not start within ${timeoutMs} ms`, 502, 'local')), timeoutMs)
      const onLine = (stream: LogLine['stream'], line: string) => {
        const item: LogLine = { timestamp: new Date().toISOString(), stream, line }
        entry.history.push(item)
        if (entry.history.length > HISTORY_LINES) entry.history.shift()
        for (const l of entry.listeners) l(item)
        if (!settled) {
          recent.push(line)
          if (recent.length > 20) recent.shift()
          if (stream === 'stdout' && line.includes('"event":"listening"')) settle()
        }
      }
      splitLines(child.stdout!, (l) => onLine('stdout', l))
      splitLines(child.stderr!, (l) => onLine('stderr', l))
      child.once('error', (err) => settle(new RuntimeProviderError(`Runtime could not be started: ${err.message}`, 502, 'local')))
      child.once('exit', (code) => settle(new RuntimeProviderError(`Runtime exited during start-up (code ${code}): ${recent.slice(-5).join(' | ')}`, 502, 'local')))
    })
  }

  private async kill(entry: Entry) {
    const child = entry.child
    if (!child) return
    child.kill('SIGTERM')
    const grace = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS)
    await entry.exited
    clearTimeout(grace)
  }
}

function splitLines(stream: NodeJS.ReadableStream, onLine: (line: string) => void) {
  let carry = ''
  stream.setEncoding('utf8')
  stream.on('data', (chunk: string) => {
    carry += chunk
    let i: number
    while ((i = carry.indexOf('\n')) >= 0) {
      onLine(carry.slice(0, i).replace(/\r$/, '').slice(0, MAX_LINE))
      carry = carry.slice(i + 1)
    }
    if (carry.length > MAX_LINE) {
      onLine(carry.slice(0, MAX_LINE))
      carry = ''
    }
  })
  stream.on('end', () => {
    if (carry) onLine(carry)
    carry = ''
  })
}

const urlOf = (port: number) => `http://127.0.0.1:${port}`

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number }
      s.close(() => resolve(port))
    })
  })
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer()
    s.once('error', () => resolve(false))
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)))
  })
}
