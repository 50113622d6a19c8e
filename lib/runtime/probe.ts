import { deadline } from '../deadline'
import { readCapped } from '../http/read-capped'
import { describeFailure } from '../probe/service-probe'

/**
 * The agent status probe (spec "Agent status probe", "Agent runtime status classification"): `/healthz`,
 * `/readyz` and `/api/status` in parallel, each with its own timeout; `/api/status` is authoritative. Fetch
 * only, so it runs on Workers. Whatever the runtime does (hangs, closes the socket, answers 500 or a body
 * that is not the documented JSON) ends up classified; this never throws.
 *
 * A probe counts as answering 200 only when the status is 200 *and* the body is the documented JSON:
 * `/healthz` `{ok: true}`, `/readyz` `{ready: true}`, `/api/status` an object whose present fields have the
 * documented types (`configured` boolean required). A 200 with garbage is recorded as failed with its reason.
 */
export const RUNTIME_STATUSES = ['running', 'healthy', 'starting', 'stopped', 'setup', 'unknown', 'unreachable'] as const
export type RuntimeStatus = (typeof RUNTIME_STATUSES)[number]

export const PROBE_PATHS = ['/healthz', '/readyz', '/api/status'] as const
export type ProbePath = (typeof PROBE_PATHS)[number]

/** Spec: `/healthz` 5 s, `/readyz` 4 s, `/api/status` 5 s. */
export const PROBE_TIMEOUTS_MS: Record<ProbePath, number> = { '/healthz': 5000, '/readyz': 4000, '/api/status': 5000 }

export interface ProbeCheck {
  path: ProbePath
  ok: boolean
  /** The HTTP status, null when nothing answered. */
  status: number | null
  /** Null when ok; else a short reason (`HTTP 500`, `timeout (5s)`, `connection refused`, `body is not JSON`, ...). */
  reason: string | null
}

export interface ProbeResult {
  status: RuntimeStatus
  /** Null for `running` and `healthy`, else a short reason. */
  statusReason: string | null
  probeChecks: ProbeCheck[]
  /** From `/healthz`, else `/api/status`; null when neither says (the caller applies the platform default). */
  runtimeVersion: string | null
  ffmpegAvailable: boolean
  ffmpegVersion: string | null
  /** `/api/status` `uptime` as the runtime wrote it. */
  uptime: string | null
  /** Derived from `/readyz` `uptimeMs` (ISO 8601), null when unknown. */
  startedAt: string | null
}

export interface ProbeOptions {
  fetch?: typeof fetch
  timeouts?: Partial<Record<ProbePath, number>>
  /** For tests: the clock `startedAt` is computed from. */
  now?: () => number
}

// A probe answer is a few hundred bytes; anything far larger is not the documented answer.
const MAX_BODY_BYTES = 64 * 1024

interface StatusBody {
  configured: boolean
  running?: boolean
  state?: string
  version?: string
  uptime?: string
  ffmpeg?: { available: boolean; version: string | null }
}

interface Answer {
  check: ProbeCheck
  body?: Record<string, unknown>
}

export async function probeRuntime(baseUrl: string, opts: ProbeOptions = {}): Promise<ProbeResult> {
  const fetchImpl = opts.fetch ?? fetch
  const timeouts = { ...PROBE_TIMEOUTS_MS, ...opts.timeouts }
  const now = opts.now ?? Date.now
  const [healthz, readyz, status] = await Promise.all(PROBE_PATHS.map((path) => ask(fetchImpl, baseUrl, path, timeouts[path])))

  const { statusBody, statusOk } = acceptStatus(status)
  const { healthOk, readyOk } = acceptLegacy(healthz, readyz)
  const checks = [healthz.check, readyz.check, status.check]
  const ffmpeg = statusOk ? statusBody?.ffmpeg : undefined
  const version = (healthOk && typeof healthz.body?.version === 'string' ? healthz.body.version : null) ?? (statusOk ? (statusBody?.version ?? null) : null)
  const uptimeMs = readyz.body && typeof readyz.body.uptimeMs === 'number' && Number.isFinite(readyz.body.uptimeMs) && readyz.body.uptimeMs >= 0 ? readyz.body.uptimeMs : null
  const base = {
    probeChecks: checks,
    runtimeVersion: version,
    ffmpegAvailable: ffmpeg?.available === true,
    ffmpegVersion: ffmpeg?.available ? (ffmpeg.version ?? null) : null,
    uptime: statusOk ? (statusBody?.uptime ?? null) : null,
    startedAt: uptimeMs === null ? null : new Date(now() - uptimeMs).toISOString(),
  }
  return { ...classify(healthOk, readyOk, statusOk ? statusBody : null, checks), ...base }
}

/** The status of a runtime as `probeRuntime` classifies it, and the requests it took to know. */
export interface RuntimeCheck {
  status: RuntimeStatus
  statusReason: string | null
  /** Paths asked: `/api/status` alone when it decided, else all three. */
  asked: ProbePath[]
}

/** The longest `checkRuntime` takes: `/api/status`, then the slower legacy probe. */
export const CHECK_TIMEOUT_MS = PROBE_TIMEOUTS_MS['/api/status'] + Math.max(PROBE_TIMEOUTS_MS['/healthz'], PROBE_TIMEOUTS_MS['/readyz'])

/**
 * The watchdog's check: the same status and reason as `probeRuntime`, in fewer requests. `/api/status` is asked
 * first; when it answers the documented JSON with `configured` false, `running` or `stopped`, the table's first three
 * rows decide whatever the legacy probes say, so they are not asked. Otherwise (not 200, another state, a malformed
 * body) the legacy probes are asked in parallel and the whole table applies. A healthy runtime costs one request
 * instead of three; one without `/api/status` costs the same three, in two steps (at most `CHECK_TIMEOUT_MS`).
 */
export async function checkRuntime(baseUrl: string, opts: Omit<ProbeOptions, 'now'> = {}): Promise<RuntimeCheck> {
  const fetchImpl = opts.fetch ?? fetch
  const timeouts = { ...PROBE_TIMEOUTS_MS, ...opts.timeouts }
  const status = await ask(fetchImpl, baseUrl, '/api/status', timeouts['/api/status'])
  const { statusBody, statusOk } = acceptStatus(status)
  if (statusOk && statusBody && statusDecides(statusBody)) return { ...classify(false, false, statusBody, []), asked: ['/api/status'] }
  const [healthz, readyz] = await Promise.all((['/healthz', '/readyz'] as const).map((path) => ask(fetchImpl, baseUrl, path, timeouts[path])))
  const { healthOk, readyOk } = acceptLegacy(healthz, readyz)
  return { ...classify(healthOk, readyOk, statusOk ? statusBody : null, [healthz.check, readyz.check, status.check]), asked: [...PROBE_PATHS] }
}

/** `/api/status`'s answer validated against its documented shape (a 200 with the wrong shape is a failed probe). */
function acceptStatus(status: Answer) {
  const statusBody = status.body ? parseStatus(status.body) : null
  return { statusBody, statusOk: accept(status, () => null, () => statusBody !== null) }
}

/** The legacy probes' answers validated against their documented shapes and verdicts. */
function acceptLegacy(healthz: Answer, readyz: Answer) {
  return {
    healthOk: accept(healthz, (b) => (b.ok === true ? null : 'not ok'), (b) => typeof b.ok === 'boolean' && optional(b, 'version', 'string') && optional(b, 'status', 'string')),
    readyOk: accept(readyz, (b) => (b.ready === true ? null : 'not ready'), (b) => typeof b.ready === 'boolean' && optional(b, 'uptimeMs', 'number') && (b.failing === undefined || Array.isArray(b.failing))),
  }
}

/** The table's rows where `/api/status` alone decides (`classify` reads no legacy result for them). */
const statusDecides = (s: StatusBody) => !s.configured || s.running !== undefined || s.state === 'running' || s.state === 'stopped'

/** The spec's table, row by row. */
function classify(healthOk: boolean, readyOk: boolean, status: StatusBody | null, checks: ProbeCheck[]): { status: RuntimeStatus; statusReason: string | null } {
  if (status) {
    if (!status.configured) return { status: 'setup', statusReason: 'Runtime is not configured yet' }
    if (status.running === true || status.state === 'running') return { status: 'running', statusReason: null }
    if (status.running === false || status.state === 'stopped') {
      return { status: 'stopped', statusReason: `Runtime reports it is not running${status.state ? ` (state ${quote(status.state)})` : ''}` }
    }
    // Another state: the legacy probes decide.
    const state = status.state === undefined ? 'no state' : `state ${quote(status.state)}`
    if (healthOk && readyOk) return { status: 'healthy', statusReason: null }
    if (healthOk) return { status: 'starting', statusReason: `Runtime reports ${state}; live but not ready (${checks[1].reason})` }
    return { status: 'unknown', statusReason: `Runtime reports ${state}; legacy probes inconclusive` }
  }
  if (healthOk && readyOk) return { status: 'healthy', statusReason: null }
  if (healthOk) return { status: 'starting', statusReason: `Runtime is live but not ready (${checks[1].reason})` }
  if (readyOk) return { status: 'unknown', statusReason: `Runtime is ready but not live (${checks[0].reason})` }
  return { status: 'unreachable', statusReason: `All probes failed: ${checks.map((c) => `${c.path} ${c.reason}`).join(', ')}` }
}

async function ask(fetchImpl: typeof fetch, baseUrl: string, path: ProbePath, timeoutMs: number): Promise<Answer> {
  const fail = (status: number | null, reason: string): Answer => ({ check: { path, ok: false, status, reason } })
  let url: URL
  try {
    url = new URL(path, baseUrl)
  } catch {
    return fail(null, 'invalid URL')
  }
  // One signal for the whole exchange: a runtime that sends headers and then stalls the body still times out.
  const bound = deadline(timeoutMs)
  try {
    let res: Response
    try {
      res = await fetchImpl(url, { signal: bound.signal, headers: { accept: 'application/json' }, redirect: 'manual' })
    } catch (err) {
      return fail(null, describeFailure(err, timeoutMs))
    }
    let text: string | null
    try {
      // Read no deeper than the cap: a runtime cannot make the platform buffer more, whatever it sends.
      text = await readCapped(res, MAX_BODY_BYTES)
    } catch (err) {
      return fail(res.status, `body cut off: ${describeFailure(bound.signal.aborted ? bound.signal.reason : err, timeoutMs)}`)
    }
    if (res.status !== 200) return fail(res.status, `HTTP ${res.status}`)
    if (text === null) return fail(res.status, 'body too large')
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      return fail(res.status, 'body is not JSON')
    }
    if (!body || typeof body !== 'object' || Array.isArray(body)) return fail(res.status, 'body is not a JSON object')
    return { check: { path, ok: true, status: 200, reason: null }, body: body as Record<string, unknown> }
  } finally {
    bound.clear()
  }
}

/** Marks a 200 answer failed when its body has the wrong shape or says no; true when it stays ok. */
function accept(answer: Answer, verdict: (b: Record<string, unknown>) => string | null, shape: (b: Record<string, unknown>) => boolean): boolean {
  if (!answer.check.ok || !answer.body) return false
  if (!shape(answer.body)) {
    answer.check.ok = false
    answer.check.reason = 'body has the wrong shape'
    return false
  }
  const no = verdict(answer.body)
  if (no) {
    answer.check.ok = false
    answer.check.reason = no
    return false
  }
  return true
}

function parseStatus(b: Record<string, unknown>): StatusBody | null {
  if (typeof b.configured !== 'boolean') return null
  if (!optional(b, 'running', 'boolean') || !optional(b, 'state', 'string') || !optional(b, 'version', 'string') || !optional(b, 'uptime', 'string')) return null
  let ffmpeg: StatusBody['ffmpeg']
  const runtime = b.runtime
  if (runtime !== undefined) {
    if (!runtime || typeof runtime !== 'object') return null
    const f = (runtime as Record<string, unknown>).ffmpeg
    if (f !== undefined) {
      if (!f || typeof f !== 'object') return null
      const { available, version } = f as Record<string, unknown>
      if (typeof available !== 'boolean' || (version !== undefined && version !== null && typeof version !== 'string')) return null
      ffmpeg = { available, version: (version as string | null | undefined) ?? null }
    }
  }
  return {
    configured: b.configured,
    running: b.running as boolean | undefined,
    state: b.state as string | undefined,
    version: b.version as string | undefined,
    uptime: b.uptime as string | undefined,
    ffmpeg,
  }
}

const optional = (b: Record<string, unknown>, key: string, type: 'string' | 'boolean' | 'number') => b[key] === undefined || typeof b[key] === type

const quote = (s: string) => JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}…` : s)
