import type { Kv, LimitResult, LimitRule, RateLimiter } from './types'

/**
 * In-process store with the Upstash adapter's semantics (TTL, NX, fixed windows).
 * Used by the local server and unit tests; one instance per process is shared by every family.
 */
export class MemoryKv implements Kv, RateLimiter {
  private entries = new Map<string, { value: string; expiresAt: number }>()

  constructor(private now: () => number = Date.now) {}

  private live(key: string) {
    const e = this.entries.get(key)
    if (!e) return undefined
    if (e.expiresAt <= this.now()) {
      this.entries.delete(key)
      return undefined
    }
    return e
  }

  async get<T>(key: string) {
    const e = this.live(key)
    return e ? (JSON.parse(e.value) as T) : null
  }

  async set(key: string, value: unknown, opts: { ttlMs?: number; nx?: boolean } = {}) {
    if (opts.nx && this.live(key)) return false
    this.entries.set(key, { value: JSON.stringify(value), expiresAt: opts.ttlMs ? this.now() + opts.ttlMs : Infinity })
    return true
  }

  async take<T>(key: string) {
    const e = this.live(key)
    this.entries.delete(key)
    return e ? (JSON.parse(e.value) as T) : null
  }

  async del(key: string) {
    this.entries.delete(key)
  }

  async limit(rule: LimitRule, identifier: string): Promise<LimitResult> {
    const windowMs = rule.windowSec * 1000
    const bucket = Math.floor(this.now() / windowMs)
    const key = `rl:${rule.name}:${identifier}:${bucket}`
    const reset = (bucket + 1) * windowMs
    const e = this.live(key)
    const used = (e ? Number(e.value) : 0) + 1
    this.entries.set(key, { value: String(used), expiresAt: reset })
    return { success: used <= rule.limit, limit: rule.limit, remaining: Math.max(0, rule.limit - used), reset }
  }
}
