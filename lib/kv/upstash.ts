import { toHex } from '../crypto'
import { deadline } from '../deadline'
import { DependencyUnavailableError } from '../http/dependency'
import { fixedWindowLimit } from './limit'
import { incrWithExpiry, type KvScript } from './script'
import type { Kv, LimitResult, LimitRule, RateLimiter } from './types'

/**
 * How long one kv call may take (one REST request, or two for a script Redis has not cached yet; never retried):
 * past it the call fails as `KV_UNAVAILABLE`, so a kv store that is down answers a request within about this.
 */
export const KV_TIMEOUT_MS = 3000

// Redis error replies that say the command itself was wrong (a bug, a 500), not that the store is down.
const COMMAND_ERROR = /^(ERR|WRONGTYPE|NOSCRIPT|EXECABORT)\b/

/** Upstash's `{ error }` answer (its message is the error, never the command), or an answer that is not its protocol. */
export class UpstashError extends Error {
  override name = 'UpstashError'
}

// Script SHA-1s (EVALSHA), computed once per script.
const shas = new WeakMap<KvScript<unknown>, Promise<string>>()
const sha1 = (script: KvScript<unknown>) => {
  let sha = shas.get(script)
  if (!sha) {
    sha = crypto.subtle.digest('SHA-1', new TextEncoder().encode(script.lua)).then(toHex)
    shas.set(script, sha)
  }
  return sha
}

type Send = (command: (string | number)[]) => Promise<unknown>

/**
 * Upstash Redis over its REST API: each command is one `POST <url>` of a JSON array, `Authorization: Bearer <token>`,
 * answered `{ result }` (200) or `{ error }` (400 for a command Redis refused; 401 for a wrong token). One client per
 * request (no module-global connections), carrying Upstash's read-your-writes token (`upstash-sync-token`) from
 * call to call. Every call is bounded by `timeoutMs` (`lib/deadline.ts`) and never retried: a store that does not
 * answer, refuses, fails or answers what is not its protocol throws `DependencyUnavailableError('kv')` (503
 * `KV_UNAVAILABLE`); a command Redis refused (ERR, WRONGTYPE, NOSCRIPT, EXECABORT) is thrown as it is, a bug.
 * Values are JSON text, so answers are read as plain JSON strings (no `Upstash-Encoding: base64`).
 */
export class UpstashKv implements Kv, RateLimiter {
  private syncToken = ''
  private readonly timeoutMs: number
  private readonly now: () => number

  constructor(
    private readonly url: string,
    private readonly token: string,
    opts: { timeoutMs?: number; now?: () => number } = {},
  ) {
    this.timeoutMs = opts.timeoutMs ?? KV_TIMEOUT_MS
    this.now = opts.now ?? Date.now
  }

  /** Runs `op`, whose commands share one deadline, and classifies what it throws. */
  private async run<T>(op: (send: Send) => Promise<T>): Promise<T> {
    const bound = deadline(this.timeoutMs)
    try {
      return await op((command) => this.send(command, bound.signal))
    } catch (e) {
      if (e instanceof UpstashError && COMMAND_ERROR.test(e.message)) throw e
      throw new DependencyUnavailableError('kv', { cause: e })
    } finally {
      bound.clear()
    }
  }

  private async send(command: (string | number)[], signal: AbortSignal): Promise<unknown> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}`, 'content-type': 'application/json' }
    if (this.syncToken) headers['upstash-sync-token'] = this.syncToken
    const res = await fetch(this.url, { method: 'POST', headers, body: JSON.stringify(command.map(String)), signal })
    const text = await res.text()
    let body: { result?: unknown; error?: unknown } | null
    try {
      body = JSON.parse(text)
    } catch {
      throw new UpstashError(`Not a JSON answer (HTTP ${res.status})`)
    }
    if (typeof body?.error === 'string') throw new UpstashError(body.error)
    if (!res.ok || body?.result === undefined) throw new UpstashError(`No result (HTTP ${res.status})`)
    this.syncToken = res.headers.get('upstash-sync-token') ?? ''
    return body.result
  }

  async get<T>(key: string) {
    const raw = (await this.run((send) => send(['get', key]))) as string | null
    return raw == null ? null : (JSON.parse(raw) as T)
  }

  async set(key: string, value: unknown, opts: { ttlMs?: number; nx?: boolean } = {}) {
    const command = ['set', key, JSON.stringify(value)]
    if (opts.ttlMs) command.push('px', String(opts.ttlMs))
    if (opts.nx) command.push('nx')
    return (await this.run((send) => send(command))) === 'OK'
  }

  async take<T>(key: string) {
    const raw = (await this.run((send) => send(['getdel', key]))) as string | null
    return raw == null ? null : (JSON.parse(raw) as T)
  }

  async del(key: string) {
    await this.run((send) => send(['del', key]))
  }

  async incr(key: string, by: number, ttlMs: number) {
    return Number(await this.eval(incrWithExpiry, [key], [by, ttlMs]))
  }

  /** EVALSHA first, EVAL when Redis does not have the script yet (then it does), both within the call's deadline. */
  async eval<R>(script: KvScript<R>, keys: string[], args: (string | number)[]) {
    const tail = [keys.length, ...keys, ...args]
    return (await this.run(async (send) => {
      try {
        return await send(['evalsha', await sha1(script), ...tail])
      } catch (e) {
        if (e instanceof UpstashError && e.message.startsWith('NOSCRIPT')) return send(['eval', script.lua, ...tail])
        throw e
      }
    })) as R
  }

  async limit(rule: LimitRule, identifier: string): Promise<LimitResult> {
    return fixedWindowLimit(this, this.now(), rule, identifier)
  }
}
