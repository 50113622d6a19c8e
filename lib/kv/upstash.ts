import { Redis } from '@upstash/redis/cloudflare' // the Workers entry: fetch only, no Node fallbacks
import { deadline } from '../deadline'
import { DependencyUnavailableError } from '../http/dependency'
import { fixedWindowLimit } from './limit'
import { incrWithExpiry, type KvScript } from './script'
import type { Kv, LimitResult, LimitRule, RateLimiter } from './types'

/**
 * How long one kv call may take (one REST request, no retry): past it the call fails as `KV_UNAVAILABLE`, so a
 * kv store that is down answers a request within about this, never after the SDK's retry loop (5 retries).
 */
export const KV_TIMEOUT_MS = 3000

// Redis error replies that say the command itself was wrong (a bug, a 500), not that the store is down.
const COMMAND_ERROR = /^(ERR|WRONGTYPE|NOSCRIPT|EXECABORT)\b/

/**
 * Upstash Redis over REST: one client per request (no module-global connections). Every call is one request bounded
 * by `timeoutMs` (`lib/deadline.ts`) and never retried; a store that does not answer, refuses, fails (5xx) or answers
 * what is not its protocol throws `DependencyUnavailableError('kv')` (503 `KV_UNAVAILABLE`).
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

  /**
   * Runs `op` on a client whose requests abort at this call's deadline. A client per call, since the SDK takes its
   * signal per client; its read-your-writes token is carried from call to call as one client would.
   */
  private async run<T>(op: (redis: Redis) => Promise<T>): Promise<T> {
    const bound = deadline(this.timeoutMs)
    // A signal function (not a signal): the SDK then throws on abort, where with a plain signal it would answer the
    // abort reason as the command's result.
    const redis = new Redis({
      url: this.url,
      token: this.token,
      automaticDeserialization: false,
      enableTelemetry: false,
      retry: { retries: 0 },
      signal: () => bound.signal,
    })
    redis.readYourWritesSyncToken = this.syncToken
    try {
      const result = await op(redis)
      this.syncToken = redis.readYourWritesSyncToken ?? ''
      return result
    } catch (e) {
      if (e instanceof Error && e.name === 'UpstashError' && COMMAND_ERROR.test(e.message)) throw e
      throw new DependencyUnavailableError('kv', { cause: e })
    } finally {
      bound.clear()
    }
  }

  async get<T>(key: string) {
    const raw = await this.run((r) => r.get<string>(key))
    return raw == null ? null : (JSON.parse(raw) as T)
  }

  async set(key: string, value: unknown, opts: { ttlMs?: number; nx?: boolean } = {}) {
    const json = JSON.stringify(value)
    const res = await this.run((r) =>
      opts.ttlMs
        ? opts.nx
          ? r.set(key, json, { px: opts.ttlMs, nx: true })
          : r.set(key, json, { px: opts.ttlMs })
        : opts.nx
          ? r.set(key, json, { nx: true })
          : r.set(key, json),
    )
    return res === 'OK'
  }

  async take<T>(key: string) {
    const raw = await this.run((r) => r.getdel<string>(key))
    return raw == null ? null : (JSON.parse(raw) as T)
  }

  async del(key: string) {
    await this.run((r) => r.del(key))
  }

  async incr(key: string, by: number, ttlMs: number) {
    return Number(await this.eval(incrWithExpiry, [key], [by, ttlMs]))
  }

  /** EVALSHA first, EVAL when Redis does not have the script yet (the SDK's `Script.exec`). */
  async eval<R>(script: KvScript<R>, keys: string[], args: (string | number)[]) {
    return (await this.run((r) => r.createScript<R>(script.lua).exec(keys, args.map(String)))) as R
  }

  async limit(rule: LimitRule, identifier: string): Promise<LimitResult> {
    return fixedWindowLimit(this, this.now(), rule, identifier)
  }
}
