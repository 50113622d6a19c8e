import { fixedWindowLimit } from './limit'
import { incrWithExpiry, type KvScript, type LocalScriptStore } from './script'
import type { Kv, LimitResult, LimitRule, RateLimiter } from './types'

/** Fewest writes between two sweeps: small stores are swept rarely, for nothing. */
export const SWEEP_MIN_WRITES = 256

/**
 * In-process store with the Upstash adapter's semantics (TTL, NX, fixed windows).
 * Used by the local server and unit tests; one instance per process is shared by every family.
 * Expired entries are dropped when read, and by a sweep once the writes since the last sweep reach half
 * the store's size (at least SWEEP_MIN_WRITES): every write pays O(1) amortised, no timer keeps the
 * process alive, and keys never read again (rate-limit windows, nonces) cannot pile up.
 */
export class MemoryKv implements Kv, RateLimiter {
  private entries = new Map<string, { value: string; expiresAt: number }>()
  private writesSinceSweep = 0

  constructor(private now: () => number = Date.now) {}

  /** Entries held, expired ones not yet swept included (tests watch eviction through it). */
  get size() {
    return this.entries.size
  }

  private write(key: string, value: string, expiresAt: number) {
    this.entries.set(key, { value, expiresAt })
    if (++this.writesSinceSweep >= Math.max(SWEEP_MIN_WRITES, this.entries.size / 2)) this.sweep()
  }

  /** Drops every expired entry now. */
  sweep() {
    const now = this.now()
    for (const [key, e] of this.entries) if (e.expiresAt <= now) this.entries.delete(key)
    this.writesSinceSweep = 0
  }

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
    this.write(key, JSON.stringify(value), opts.ttlMs ? this.now() + opts.ttlMs : Infinity)
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

  async incr(key: string, by: number, ttlMs: number) {
    return this.eval(incrWithExpiry, [key], [by, ttlMs])
  }

  /** The script's JavaScript twin, run synchronously on this store: nothing interleaves, as in Redis. */
  async eval<R>(script: KvScript<R>, keys: string[], args: (string | number)[]) {
    return script.local(this.scriptStore, keys, args.map(String))
  }

  private readonly scriptStore: LocalScriptStore = (() => {
    const zset = (key: string): Record<string, number> => {
      const e = this.live(key)
      return e ? (JSON.parse(e.value) as Record<string, number>) : {}
    }
    const saveZset = (key: string, members: Record<string, number>) => {
      if (Object.keys(members).length === 0) return void this.entries.delete(key) // Redis drops empty sets
      this.write(key, JSON.stringify(members), this.live(key)?.expiresAt ?? Infinity)
    }
    return {
      now: () => this.now(),
      get: (key) => this.live(key)?.value ?? null,
      set: (key, value, ttlMs) => this.write(key, value, ttlMs ? this.now() + ttlMs : Infinity),
      del: (key) => void this.entries.delete(key),
      pttl: (key) => {
        const e = this.live(key)
        return !e ? -2 : e.expiresAt === Infinity ? -1 : e.expiresAt - this.now()
      },
      pexpire: (key, ttlMs) => {
        const e = this.live(key)
        if (e) e.expiresAt = this.now() + ttlMs
      },
      incrby: (key, by) => {
        const e = this.live(key)
        const value = (e ? Number(e.value) : 0) + by
        this.write(key, String(value), e ? e.expiresAt : Infinity)
        return value
      },
      zadd: (key, score, member) => saveZset(key, { ...zset(key), [member]: score }),
      zrem: (key, member) => {
        const members = zset(key)
        if (!(member in members)) return 0
        delete members[member]
        saveZset(key, members)
        return 1
      },
      zremrangebyscore: (key, min, max) => {
        const members = zset(key)
        let removed = 0
        for (const [m, score] of Object.entries(members)) if (score >= min && score <= max) (delete members[m], removed++)
        if (removed) saveZset(key, members)
        return removed
      },
      zcard: (key) => Object.keys(zset(key)).length,
      zscore: (key, member) => zset(key)[member] ?? null,
      zrangeWithScores: (key, start, stop) => {
        const ranked = Object.entries(zset(key)).sort(([a, x], [b, y]) => x - y || (a < b ? -1 : a > b ? 1 : 0))
        const from = Math.max(0, start < 0 ? ranked.length + start : start)
        const to = Math.min(ranked.length - 1, stop < 0 ? ranked.length + stop : stop)
        return from > to ? [] : ranked.slice(from, to + 1)
      },
    }
  })()

  async limit(rule: LimitRule, identifier: string): Promise<LimitResult> {
    return fixedWindowLimit(this, this.now(), rule, identifier)
  }
}
