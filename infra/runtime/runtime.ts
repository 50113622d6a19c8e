import { execFile } from 'node:child_process'
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto'
import { writeFileSync, unlinkSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { join } from 'node:path'
import { getHeapStatistics } from 'node:v8'
import { formatEvent, type LogFields } from '../../lib/log'
import {
  DIAGNOSTIC_COMMANDS,
  type DiagnosticCommand,
  type DiagnosticResult,
  HEARTBEAT_FREQUENCIES,
  type HeartbeatFrequency,
  MAX_CHAT_TEXT,
  type SyncPayload,
} from '../../lib/runtime/provider'
import { cronJobs, FREQUENCY_MS, MAX_DELIVERIES, MAX_HISTORY, publicSession, type RuntimeState, StateFile, type StoredSession } from './state'

/**
 * The local agent runtime: what `LocalRuntimeProvider` runs as one child process per agent (and what a
 * developer can run by hand: `PORT=18789 GATEWAY_TOKEN=t AGENT_ID=a DATA_DIR=/tmp/a node --import tsx
 * infra/runtime/main.ts`). It answers the spec's probes (unauthenticated) and the gateway API of
 * lib/runtime/gateway.ts (Bearer GATEWAY_TOKEN):
 *
 * | Method and path | Answer |
 * |---|---|
 * | `GET /healthz` | `{ok: true, status: 'live', version}` as soon as it listens |
 * | `GET /readyz` | `{ready, failing, uptimeMs}`: 503 with `failing: ['startup']` until the start-up delay passed and ffmpeg was looked for |
 * | `GET /api/status` | `{configured, running, state, version, uptime, runtime: {ffmpeg: {available, version}}}`; 503 (state `starting`) until ready |
 * | `GET /api/gateway/sessions` | `{sessions}` |
 * | `GET /api/gateway/cron` | `{jobs}` (the heartbeat job, when set) |
 * | `PUT /api/gateway/cron/heartbeat` | `{enabled, frequency}` → `{job}`; persisted, and run on its schedule |
 * | `POST /api/gateway/chat` | `{text, sessionId?, deliveryId?}` → `{sessionId, reply}` (an echo: no AI call); a `deliveryId` answered before gets its first answer again, the message not handled twice |
 * | `POST /api/gateway/sync` | `SyncPayload` → `{ok: true}` (stored in DATA_DIR) |
 * | `POST /api/gateway/diagnostics` | `{command}` (one of the ten) → `{command, output, exitCode, durationMs}`; another command 400 |
 * | `POST /api/gateway/memory/reset` | → `{ok: true}` (the synced memories cleared) |
 *
 * Errors are `{error}`: 400 bad input, 401 without the token, 404 unknown path, 405 wrong method, 413 body
 * over 1 MB. One JSON log line per request and per event goes to stdout (never the token, never a query).
 */
export interface RuntimeConfig {
  port: number
  host: string
  gatewayToken: string
  agentId: string
  dataDir: string
  version: string
  image: string | null
  /** How long `/readyz` says not ready after start-up, so `starting` can be seen. */
  readyDelayMs: number
}

export function configFromEnv(env: NodeJS.ProcessEnv): RuntimeConfig {
  const port = Number(env.PORT ?? 18789)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error('PORT must be a port number')
  if (!env.DATA_DIR) throw new Error('DATA_DIR is required (the runtime volume)')
  const readyDelayMs = Number(env.READY_DELAY_MS ?? 300)
  return {
    port,
    host: env.HOST || '127.0.0.1',
    gatewayToken: env.GATEWAY_TOKEN ?? '',
    agentId: env.AGENT_ID ?? '',
    dataDir: env.DATA_DIR,
    version: env.RUNTIME_VERSION || '0.0.0-local',
    image: env.RUNTIME_IMAGE || null,
    readyDelayMs: Number.isFinite(readyDelayMs) && readyDelayMs >= 0 ? readyDelayMs : 300,
  }
}

const MAX_BODY_BYTES = 1024 * 1024
const LOG_BUFFER = 500
const TAIL_LINES = 100
const CHANNELS = ['webchat', 'telegram', 'discord', 'whatsapp'] as const
const MAX_TIMER_MS = 2 ** 31 - 1

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

export interface RunningRuntime {
  server: Server
  port: number
  stop(): Promise<void>
}

export async function startRuntime(config: RuntimeConfig, out: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): Promise<RunningRuntime> {
  const startedAt = Date.now()
  const logLines: string[] = []
  const log = (event: string, fields: LogFields = {}, level: 'info' | 'warn' | 'error' = 'info') => {
    const line = formatEvent(level, event, { agentId: config.agentId || undefined, ...fields })
    logLines.push(line)
    if (logLines.length > LOG_BUFFER) logLines.shift()
    out(line)
  }

  const store = new StateFile(config.dataDir)
  let state: RuntimeState = store.load((err) => log('state_corrupt', { error: String(err) }, 'warn'))
  const save = () => store.write(state)

  const gateway = { startedAt: Date.now(), restarts: 0 }
  let heartbeatTimer: ReturnType<typeof setTimeout> | undefined

  function armHeartbeat() {
    clearTimeout(heartbeatTimer)
    heartbeatTimer = undefined
    const h = state.heartbeat
    if (!h?.enabled || !h.nextRun) return
    const wait = Math.max(0, Date.parse(h.nextRun) - Date.now())
    heartbeatTimer = setTimeout(() => {
      const hb = state.heartbeat
      if (!hb?.enabled) return
      if (Date.parse(hb.nextRun ?? '') > Date.now()) return armHeartbeat() // a long wait, chained
      const now = Date.now()
      hb.lastRun = new Date(now).toISOString()
      hb.nextRun = new Date(now + FREQUENCY_MS[hb.frequency]).toISOString()
      save()
      log('heartbeat', { frequency: hb.frequency, nextRun: hb.nextRun })
      armHeartbeat()
    }, Math.min(wait, MAX_TIMER_MS))
    heartbeatTimer.unref()
  }
  armHeartbeat()

  // ffmpeg, looked for for real; readiness waits for the answer.
  const ffmpeg: { available: boolean; version: string | null; checked: boolean } = { available: false, version: null, checked: false }
  execFile('ffmpeg', ['-version'], { timeout: 5000 }, (err, stdout) => {
    ffmpeg.checked = true
    if (!err) {
      ffmpeg.available = true
      ffmpeg.version = /ffmpeg version (\S+)/.exec(stdout)?.[1] ?? (stdout.split('\n')[0].trim() || null)
    }
    log('ffmpeg_checked', { available: ffmpeg.available, version: ffmpeg.version })
  })

  const uptimeMs = () => Date.now() - startedAt
  const ready = () => ffmpeg.checked && uptimeMs() >= config.readyDelayMs
  const configured = () => Boolean(config.gatewayToken && config.agentId)
  const runState = () => (!ready() ? 'starting' : configured() ? 'running' : 'setup')

  const tokenDigest = createHash('sha256').update(config.gatewayToken).digest()
  const authorized = (req: IncomingMessage) => {
    if (!config.gatewayToken) return false
    const m = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')
    if (!m) return false
    return timingSafeEqual(createHash('sha256').update(m[1]).digest(), tokenDigest)
  }

  function channelStatus() {
    return CHANNELS.map((name) => {
      const sessions = state.sessions.filter((s) => s.channel === name)
      const lastActive = sessions.map((s) => s.lastActive).filter((x): x is string => !!x).sort().at(-1) ?? null
      // webchat is the gateway itself: connected while it runs; the others once a session exists for them.
      const status = name === 'webchat' || sessions.length > 0 ? 'connected' : 'not-configured'
      return { name, provider: name, status, lastActive, messages: sessions.reduce((n, s) => n + s.messages, 0) }
    })
  }

  async function doctor(): Promise<{ output: string; exitCode: number }> {
    const checks: Array<{ name: string; ok: boolean; detail: string; required: boolean }> = []
    const probeFile = join(config.dataDir, `.doctor-${process.pid}`)
    try {
      writeFileSync(probeFile, 'ok')
      unlinkSync(probeFile)
      checks.push({ name: 'data directory writable', ok: true, detail: config.dataDir, required: true })
    } catch (err) {
      checks.push({ name: 'data directory writable', ok: false, detail: String(err), required: true })
    }
    try {
      const s = store.read()
      checks.push({ name: 'state file readable', ok: true, detail: `${s.sessions.length} sessions, ${s.skills.length} skills`, required: true })
    } catch (err) {
      checks.push({ name: 'state file readable', ok: false, detail: String(err), required: true })
    }
    checks.push({ name: 'gateway token configured', ok: Boolean(config.gatewayToken), detail: config.gatewayToken ? 'set' : 'missing', required: true })
    const lagStart = performance.now()
    await new Promise((r) => setImmediate(r))
    const lag = performance.now() - lagStart
    checks.push({ name: 'event loop responsive', ok: lag < 500, detail: `${lag.toFixed(2)} ms`, required: true })
    const heap = getHeapStatistics()
    const heapPct = (heap.used_heap_size / heap.heap_size_limit) * 100
    checks.push({ name: 'heap below 90%', ok: heapPct < 90, detail: `${heapPct.toFixed(1)}%`, required: true })
    checks.push({ name: 'ffmpeg', ok: ffmpeg.available, detail: ffmpeg.available ? (ffmpeg.version ?? 'found') : 'not found (media skills unavailable)', required: false })
    const failed = checks.filter((c) => c.required && !c.ok).length
    const lines = checks.map((c) => `${c.ok ? 'ok  ' : c.required ? 'FAIL' : 'warn'} ${c.name}: ${c.detail}`)
    lines.push(failed ? `${failed} check(s) failed` : 'all required checks passed')
    return { output: lines.join('\n'), exitCode: failed ? 1 : 0 }
  }

  const json = (value: unknown) => JSON.stringify(value, null, 2)
  const diagnostics: Record<DiagnosticCommand, () => Promise<{ output: string; exitCode: number }> | { output: string; exitCode: number }> = {
    'runtime.version': () => ({ output: config.version, exitCode: 0 }),
    'runtime.status': () => ({
      output: json({ state: runState(), running: runState() === 'running', uptime: formatUptime(uptimeMs()), uptimeMs: uptimeMs(), pid: process.pid, gateway: { startedAt: new Date(gateway.startedAt).toISOString(), restarts: gateway.restarts } }),
      exitCode: 0,
    }),
    'runtime.memory.stats': () => ({ output: json({ ...process.memoryUsage(), storedMemories: state.memories.length }), exitCode: 0 }),
    'runtime.logs.tail': () => ({ output: logLines.slice(-TAIL_LINES).join('\n'), exitCode: 0 }),
    'runtime.config.show': () => ({
      output: json({ agentId: config.agentId, host: config.host, port: config.port, dataDir: config.dataDir, version: config.version, image: config.image, readyDelayMs: config.readyDelayMs, gatewayToken: config.gatewayToken ? 'set' : 'missing', node: process.version }),
      exitCode: 0,
    }),
    'runtime.skills.list': () => ({ output: state.skills.length ? state.skills.map((s) => `${s.name}@${s.version}`).join('\n') : '(no skills synced)', exitCode: 0 }),
    'runtime.channels.status': () => ({ output: json(channelStatus()), exitCode: 0 }),
    'runtime.cron.list': () => ({ output: json(cronJobs(state)), exitCode: 0 }),
    'runtime.doctor': doctor,
    'gateway.restart': () => {
      // The gateway's state is reloaded from the volume and its timers re-armed, as after a process restart.
      clearTimeout(heartbeatTimer)
      state = store.load((err) => log('state_corrupt', { error: String(err) }, 'warn'))
      gateway.startedAt = Date.now()
      gateway.restarts += 1
      armHeartbeat()
      log('gateway_restarted', { restarts: gateway.restarts })
      return { output: `gateway restarted (restart ${gateway.restarts}); ${state.sessions.length} sessions, ${cronJobs(state).length} cron jobs loaded`, exitCode: 0 }
    },
  }

  async function route(req: IncomingMessage, path: string): Promise<{ status: number; body: unknown }> {
    const method = req.method ?? 'GET'
    const only = (m: string) => {
      if (method !== m) throw new HttpError(405, 'Method not allowed')
    }
    if (path === '/healthz') return only('GET'), { status: 200, body: { ok: true, status: 'live', version: config.version } }
    if (path === '/readyz') {
      only('GET')
      const failing = [...(ready() ? [] : ['startup']), ...(configured() ? [] : ['config'])]
      return { status: failing.length ? 503 : 200, body: { ready: failing.length === 0, failing, uptimeMs: uptimeMs() } }
    }
    if (path === '/api/status') {
      only('GET')
      const s = runState()
      return {
        status: s === 'starting' ? 503 : 200,
        body: { configured: configured(), running: s === 'running', state: s, version: config.version, uptime: formatUptime(uptimeMs()), runtime: { ffmpeg: { available: ffmpeg.available, version: ffmpeg.version } } },
      }
    }
    if (path !== '/api/gateway' && !path.startsWith('/api/gateway/')) throw new HttpError(404, 'Not found')
    if (!authorized(req)) throw new HttpError(401, 'Unauthorized')

    switch (path) {
      case '/api/gateway/sessions':
        only('GET')
        return { status: 200, body: { sessions: state.sessions.map(publicSession) } }
      case '/api/gateway/cron':
        only('GET')
        return { status: 200, body: { jobs: cronJobs(state) } }
      case '/api/gateway/cron/heartbeat': {
        only('PUT')
        const b = object(await readJson(req))
        const frequency = b.frequency
        const enabled = b.enabled === undefined ? true : b.enabled
        if (typeof enabled !== 'boolean' || !HEARTBEAT_FREQUENCIES.includes(frequency as HeartbeatFrequency)) {
          throw new HttpError(400, `Invalid heartbeat: frequency one of ${HEARTBEAT_FREQUENCIES.join(', ')}, enabled a boolean`)
        }
        const f = frequency as HeartbeatFrequency
        state.heartbeat = { enabled, frequency: f, lastRun: state.heartbeat?.lastRun ?? null, nextRun: enabled ? new Date(Date.now() + FREQUENCY_MS[f]).toISOString() : null }
        save()
        armHeartbeat()
        log('heartbeat_set', { enabled, frequency: f })
        return { status: 200, body: { job: cronJobs(state)[0] } }
      }
      case '/api/gateway/chat': {
        only('POST')
        const b = object(await readJson(req))
        if (typeof b.text !== 'string' || !b.text.trim() || b.text.length > MAX_CHAT_TEXT) throw new HttpError(400, `text must be a non-empty string of at most ${MAX_CHAT_TEXT} characters`)
        if (b.sessionId !== undefined && (typeof b.sessionId !== 'string' || !/^[A-Za-z0-9_-]{1,100}$/.test(b.sessionId))) throw new HttpError(400, 'Invalid sessionId')
        if (b.deliveryId !== undefined && (typeof b.deliveryId !== 'string' || !/^[A-Za-z0-9_-]{1,100}$/.test(b.deliveryId))) throw new HttpError(400, 'Invalid deliveryId')
        const seen = b.deliveryId === undefined ? undefined : state.deliveries.find((d) => d.id === b.deliveryId)
        if (seen) {
          log('chat_redelivered', { sessionId: seen.sessionId, deliveryId: seen.id })
          return { status: 200, body: { sessionId: seen.sessionId, reply: seen.reply } }
        }
        const id = (b.sessionId as string | undefined) ?? `s_${randomUUID()}`
        let session = state.sessions.find((s) => s.id === id)
        if (!session) {
          session = { id, channel: 'webchat', lastActive: null, messages: 0, history: [] } satisfies StoredSession
          state.sessions.push(session)
        }
        const at = new Date().toISOString()
        const reply = `Echo: ${b.text}`
        session.history.push({ role: 'user', text: b.text, at }, { role: 'agent', text: reply, at })
        if (session.history.length > MAX_HISTORY) session.history.splice(0, session.history.length - MAX_HISTORY)
        session.messages += 2
        session.lastActive = at
        if (typeof b.deliveryId === 'string') {
          state.deliveries.push({ id: b.deliveryId, sessionId: id, reply, at })
          if (state.deliveries.length > MAX_DELIVERIES) state.deliveries.splice(0, state.deliveries.length - MAX_DELIVERIES)
        }
        save()
        log('chat_message', { sessionId: id, chars: b.text.length, deliveryId: b.deliveryId as string | undefined })
        return { status: 200, body: { sessionId: id, reply } }
      }
      case '/api/gateway/sync': {
        only('POST')
        const payload = parseSync(await readJson(req))
        state.skills = payload.skills
        state.memories = payload.memories
        state.files = payload.files
        state.lastSyncAt = new Date().toISOString()
        save()
        log('synced', { skills: payload.skills.length, memories: payload.memories.length, files: payload.files.length })
        return { status: 200, body: { ok: true } }
      }
      case '/api/gateway/diagnostics': {
        only('POST')
        const b = object(await readJson(req))
        const command = b.command
        if (typeof command !== 'string' || !(DIAGNOSTIC_COMMANDS as readonly string[]).includes(command)) throw new HttpError(400, 'Unknown command')
        const t0 = performance.now()
        const { output, exitCode } = await diagnostics[command as DiagnosticCommand]()
        const durationMs = performance.now() - t0
        log('diagnostic', { command, exitCode, durationMs })
        return { status: 200, body: { command: command as DiagnosticCommand, output, exitCode, durationMs } satisfies DiagnosticResult }
      }
      case '/api/gateway/memory/reset': {
        only('POST')
        const cleared = state.memories.length
        state.memories = []
        save()
        log('memory_reset', { cleared })
        return { status: 200, body: { ok: true } }
      }
      default:
        throw new HttpError(404, 'Not found')
    }
  }

  const server = createServer((req, res: ServerResponse) => {
    const t0 = performance.now()
    let path = '/'
    try {
      path = new URL(req.url ?? '/', 'http://runtime').pathname
    } catch {
      // keeps '/'
    }
    const send = (status: number, body: unknown) => {
      const text = JSON.stringify(body)
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' }).end(text)
      log('request', { method: req.method, path, status, durationMs: Math.round((performance.now() - t0) * 100) / 100 }, status >= 500 ? 'error' : 'info')
    }
    route(req, path).then(
      ({ status, body }) => send(status, body),
      (err) => {
        if (err instanceof HttpError) return send(err.status, { error: err.message })
        log('request_failed', { path, error: String(err) }, 'error')
        send(500, { error: 'Internal error' })
      },
    )
  })
  server.on('clientError', (_err, socket) => socket.destroy())

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(config.port, config.host, () => (server.off('error', reject), resolve()))
  })
  const port = (server.address() as { port: number }).port
  log('listening', { host: config.host, port, version: config.version, image: config.image, pid: process.pid })

  return {
    server,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        clearTimeout(heartbeatTimer)
        log('stopping', { uptimeMs: uptimeMs() })
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    // Over the limit the rest is read and dropped, so the client gets its 413 rather than a reset socket;
    // far over it the connection is cut.
    if (size > 16 * MAX_BODY_BYTES) {
      req.destroy()
      throw new HttpError(413, 'Body too large')
    }
    if (size <= MAX_BODY_BYTES) chunks.push(chunk)
  }
  if (size > MAX_BODY_BYTES) throw new HttpError(413, 'Body too large')
  const text = Buffer.concat(chunks).toString('utf8')
  if (!text) return {}
  try {
    return JSON.parse(text)
  } catch {
    throw new HttpError(400, 'Invalid JSON body')
  }
}

function object(v: unknown): Record<string, unknown> {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new HttpError(400, 'Body must be a JSON object')
  return v as Record<string, unknown>
}

const str = (v: unknown, max: number) => typeof v === 'string' && v.length <= max

function parseSync(v: unknown): SyncPayload {
  const b = object(v)
  const list = (key: string, ok: (item: Record<string, unknown>) => boolean) => {
    const items = b[key] ?? []
    if (!Array.isArray(items) || items.length > 1000 || !items.every((i) => i && typeof i === 'object' && ok(i as Record<string, unknown>))) {
      throw new HttpError(400, `Invalid ${key}`)
    }
    return items
  }
  return {
    skills: list('skills', (i) => str(i.name, 200) && str(i.version, 100)).map((i) => ({ name: i.name, version: i.version, manifest: i.manifest ?? null })),
    memories: list('memories', (i) => str(i.key, 500) && str(i.value, 100_000)).map((i) => ({ key: i.key, value: i.value })),
    files: list('files', (i) => str(i.name, 500) && str(i.url, 2000) && typeof i.size === 'number' && i.size >= 0).map((i) => ({ name: i.name, url: i.url, size: i.size })),
  }
}

export function formatUptime(ms: number): string {
  const s = Math.floor(ms / 1000)
  const [d, h, m] = [Math.floor(s / 86400), Math.floor((s % 86400) / 3600), Math.floor((s % 3600) / 60)]
  return [d && `${d}d`, (d || h) && `${h}h`, (d || h || m) && `${m}m`, `${s % 60}s`].filter(Boolean).join(' ')
}
