import { deadline } from '../deadline'

/** Probes one service for the dashboard: candidates first, then one longer retry on the primary URL. */
export type ServiceStatus = 'ok' | 'degraded' | 'down'

export interface ServiceTarget {
  name: string
  /** The first is the primary URL; the others are fallbacks tried in order. */
  urls: string[]
}

export interface ProbeResult {
  name: string
  status: ServiceStatus
  detail: string
}

export interface ProbeTimings {
  candidateTimeoutMs: number
  retryTimeoutMs: number
}

/** Spec: 6 s per candidate URL, then one retry on the primary URL with 8 s. */
export const DASHBOARD_PROBE_TIMINGS: ProbeTimings = { candidateTimeoutMs: 6000, retryTimeoutMs: 8000 }

const DETAIL_FIELDS = ['active', 'ready', 'status', 'build'] as const

export async function probeService(target: ServiceTarget, timings = DASHBOARD_PROBE_TIMINGS): Promise<ProbeResult> {
  let firstRefusal: Classified | undefined
  for (const url of target.urls) {
    const { answer } = await attempt(url, timings.candidateTimeoutMs)
    if (answer) {
      if (answer.status === 'ok') return { name: target.name, ...answer }
      firstRefusal ??= answer
    }
  }
  if (firstRefusal) return { name: target.name, ...firstRefusal }
  // Nothing answered: one last, longer try on the primary.
  const retry = await attempt(target.urls[0], timings.retryTimeoutMs)
  if (retry.answer) return { name: target.name, ...retry.answer }
  return { name: target.name, status: 'down', detail: describeFailure(retry.error, timings.retryTimeoutMs) }
}

type Classified = { status: ServiceStatus; detail: string }

/** One GET, its answer classified (the body read) within `timeoutMs`; `error` when nothing answered. */
async function attempt(url: string, timeoutMs: number): Promise<{ answer?: Classified; error?: unknown }> {
  const bound = deadline(timeoutMs)
  try {
    let res: Response
    try {
      res = await fetch(url, { signal: bound.signal, headers: { accept: 'application/json' }, redirect: 'manual' })
    } catch (error) {
      return { error }
    }
    return { answer: await classifyResponse(res) }
  } finally {
    bound.clear()
  }
}

async function classifyResponse(res: Response): Promise<Classified> {
  if (!res.ok) {
    await res.body?.cancel()
    return { status: 'degraded', detail: String(res.status) }
  }
  const body = await res.json().catch(() => null)
  if (body && typeof body === 'object') {
    for (const field of DETAIL_FIELDS) {
      const v = (body as Record<string, unknown>)[field]
      if (v !== undefined && v !== null && typeof v !== 'object') return { status: 'ok', detail: String(v) }
    }
  }
  return { status: 'ok', detail: 'ok' }
}

/** Maps a fetch failure to the spec's fixed detail strings (undici error codes on Node, messages on workerd). */
export function describeFailure(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; message?: string; code?: string; cause?: { code?: string; message?: string; name?: string } }
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return `timeout (${Math.round(timeoutMs / 1000)}s)`
  const code = e?.cause?.code ?? e?.code ?? ''
  const text = `${e?.message ?? ''} ${e?.cause?.message ?? ''}`.toLowerCase()
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || /dns|getaddrinfo|name not resolved/.test(text)) return 'dns error'
  if (code === 'ECONNREFUSED' || /refused/.test(text)) return 'connection refused'
  if (code === 'ECONNRESET' || /reset|other side closed|connection lost/.test(text)) return 'connection reset'
  if (code.startsWith('UND_ERR_SOCKET') || /socket/.test(text)) return 'socket error'
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ETIMEDOUT') return `timeout (${Math.round(timeoutMs / 1000)}s)`
  return 'unreachable'
}

/** `HEALTH_PROBE_URLS`: `name=url|fallback,name2=url`; the backend's `/health` is probed when unset. */
export function parseProbeTargets(setting: string | undefined, backendUrl: string): ServiceTarget[] {
  if (!setting) return [{ name: 'backend', urls: [`${backendUrl.replace(/\/+$/, '')}/health`] }]
  return setting
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const [name, urls = ''] = entry.split(/=(.*)/s)
      return { name: name.trim(), urls: urls.split('|').map((u) => u.trim()).filter(Boolean) }
    })
    .filter((t) => t.name && t.urls.length > 0)
}
