import type { Config } from '../../lib/config'
import { deadline } from '../../lib/deadline'
import { readCapped } from '../../lib/http/read-capped'

/** The most a soul host's answer may weigh: a colony tree or a cognitive state is far below this. */
const MAX_ANSWER_BYTES = 2 * 1024 * 1024

export interface HostAttempt {
  /** Origin only: a token in a path or query never reaches a response or a log. */
  host: string
  ok: boolean
  /** The HTTP status, or why there was none (`timeout`, `unreachable`, `malformed`, `too large`). */
  detail: string
  latencyMs: number
}

export type SoulAnswer =
  | { ok: true; data: unknown; fallback: boolean; attempts: HostAttempt[] }
  | { ok: false; attempts: HostAttempt[] }

const origin = (url: string) => {
  try {
    return new URL(url).origin
  } catch {
    return 'invalid-url'
  }
}

/** The configured hosts, primary first; none when SOUL_SERVICE_URL is unset. */
export const soulHosts = (config: Pick<Config, 'SOUL_SERVICE_URL' | 'SOUL_SERVICE_FALLBACK_URLS'>) =>
  config.SOUL_SERVICE_URL ? [config.SOUL_SERVICE_URL, ...config.SOUL_SERVICE_FALLBACK_URLS].map((u) => u.replace(/\/+$/, '')) : []

async function ask(base: string, path: string, config: Pick<Config, 'SOUL_SERVICE_TOKEN' | 'SOUL_SERVICE_TIMEOUT_MS'>, stop: AbortSignal) {
  const started = Date.now()
  const done = (ok: boolean, detail: string, data?: unknown) => ({ attempt: { host: origin(base), ok, detail, latencyMs: Date.now() - started }, data })
  // The whole exchange, body included, within the timeout; cancelled early once another host's answer is chosen.
  const bound = deadline(config.SOUL_SERVICE_TIMEOUT_MS, stop)
  try {
    const res = await fetch(`${base}${path}`, {
      headers: { accept: 'application/json', ...(config.SOUL_SERVICE_TOKEN ? { authorization: `Bearer ${config.SOUL_SERVICE_TOKEN}` } : {}) },
      signal: bound.signal,
    })
    if (!res.ok) {
      await res.body?.cancel()
      return done(false, `HTTP ${res.status}`)
    }
    const text = await readCapped(res, MAX_ANSWER_BYTES)
    if (text === null) return done(false, 'too large')
    const data: unknown = JSON.parse(text)
    if (!data || typeof data !== 'object' || Array.isArray(data)) return done(false, 'malformed')
    return done(true, `HTTP ${res.status}`, data)
  } catch (e) {
    if (bound.timedOut) return done(false, 'timeout')
    if (stop.aborted) return done(false, 'not needed')
    return done(false, (e as { name?: string })?.name === 'SyntaxError' ? 'malformed' : 'unreachable')
  } finally {
    bound.clear()
  }
}

/**
 * `path` from the soul hosts, every host asked at once (each within SOUL_SERVICE_TIMEOUT_MS): the primary's answer
 * when it has one; else the first fallback to answer, marked `fallback`. Asking all at once means a dead primary
 * costs no extra wait; preferring it means a fast fallback never hides a live primary. The rest are cancelled once
 * an answer is chosen. `attempts` lists every host that had finished by then.
 */
export async function askSoulHosts(config: Config, path: string): Promise<SoulAnswer> {
  const hosts = soulHosts(config)
  const stop = new AbortController()
  const attempts: HostAttempt[] = []
  const pending = hosts.map((base) =>
    ask(base, path, config, stop.signal).then((a) => {
      if (a.attempt.detail !== 'not needed') attempts.push(a.attempt)
      return a
    }),
  )
  const finish = (data: unknown, fallback: boolean): SoulAnswer => {
    stop.abort()
    return { ok: true, data, fallback, attempts: [...attempts] }
  }
  if (pending.length === 0) return { ok: false, attempts }
  const primary = await pending[0]
  if (primary.attempt.ok) return finish(primary.data, false)
  const firstFallback = await Promise.any(pending.slice(1).map((p) => p.then((a) => (a.attempt.ok ? a : Promise.reject(a))))).catch(() => null)
  return firstFallback ? finish(firstFallback.data, true) : { ok: false, attempts }
}
