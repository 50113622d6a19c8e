import type { KvScript } from './script'

/** Key-value port (Upstash Redis in production, in-process when embedded). Values are JSON. */
export interface Kv {
  get<T = unknown>(key: string): Promise<T | null>
  /** With `nx`, writes only when absent and reports whether it wrote (dedup, single-use tokens). */
  set(key: string, value: unknown, opts?: { ttlMs?: number; nx?: boolean }): Promise<boolean>
  /** Reads and deletes in one step: single-use values. */
  take<T = unknown>(key: string): Promise<T | null>
  del(key: string): Promise<void>
  /**
   * Adds `by` to the integer at `key` (absent counts as 0) and returns the new value, atomically, in one round
   * trip. The expiry is set when the counter has none (its first increment): `ttlMs` later.
   */
  incr(key: string, by: number, ttlMs: number): Promise<number>
  /**
   * Runs `script` atomically with `keys` and `args` (lib/kv/script.ts): Lua on Redis, its JavaScript twin in
   * process. Script keys live beside the JSON values; never read them with `get`.
   */
  eval<R>(script: KvScript<R>, keys: string[], args: (string | number)[]): Promise<R>
}

export interface LimitRule {
  /** Names the limiter: separate rules never share counters. */
  name: string
  limit: number
  windowSec: number
}

export interface LimitResult {
  success: boolean
  limit: number
  remaining: number
  /** Epoch milliseconds when the window resets. */
  reset: number
}

/** One round trip to the store per check. Fixed windows, atomic in both adapters. */
export interface RateLimiter {
  limit(rule: LimitRule, identifier: string): Promise<LimitResult>
}
