/**
 * A script the kv store runs atomically (Kv.eval): Lua on Redis (Upstash `evalsha`, `eval` when the script is
 * not cached yet), and the same logic in JavaScript in process, where it runs synchronously so no other command
 * interleaves. Keep the two side by side in one file; tests/kv/kv-contract.ts runs every script on both adapters.
 *
 * Replies must be what Redis gives a Lua script's return: integers (floats are truncated by Redis: return
 * whole numbers), strings, nil (null) and arrays of those. Keys are `KEYS[i]`, arguments `ARGV[i]` (strings).
 */
export interface KvScript<R> {
  /** For logs and errors. */
  name: string
  lua: string
  local(store: LocalScriptStore, keys: string[], args: string[]): R
}

/**
 * What the in-process equivalent of a script may do: the Redis commands scripts here use, on the same store
 * (and the same expiry rules) as the rest of the in-process adapter. Sorted sets are kept as member → score.
 */
export interface LocalScriptStore {
  /** Epoch ms, the adapter's clock (the Lua side reads `redis.call('TIME')`). */
  now(): number
  get(key: string): string | null
  /** SET with an optional PX; keeps no earlier expiry (as Redis SET does). */
  set(key: string, value: string, ttlMs?: number): void
  del(key: string): void
  /** Milliseconds to live; -1 without expiry, -2 when absent (PTTL). */
  pttl(key: string): number
  pexpire(key: string, ttlMs: number): void
  incrby(key: string, by: number): number
  zadd(key: string, score: number, member: string): void
  zrem(key: string, member: string): number
  /** Removes members with min <= score <= max; returns how many. */
  zremrangebyscore(key: string, min: number, max: number): number
  zcard(key: string): number
  zscore(key: string, member: string): number | null
  /**
   * ZRANGE key start stop WITHSCORES: members by rank (score, then member, ascending), `start` and `stop`
   * inclusive, negative counting from the end. Lua receives them flat (`{member, score, ...}`, scores as strings).
   */
  zrangeWithScores(key: string, start: number, stop: number): Array<[member: string, score: number]>
}

export const defineScript = <R>(script: KvScript<R>) => script

/**
 * KEYS[1] a counter; ARGV: how much to add, the expiry (ms) it gets when it has none. INCRBY then PEXPIRE in one
 * step, so a counter never lives without its expiry: `Kv.incr` on both adapters, and through it every rate limit.
 */
export const incrWithExpiry = defineScript<number>({
  name: 'incr-with-expiry',
  lua: `local n = redis.call('INCRBY', KEYS[1], ARGV[1])
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return n`,
  local(store, [key], [by, ttlMs]) {
    const n = store.incrby(key, Number(by))
    if (store.pttl(key) < 0) store.pexpire(key, Number(ttlMs))
    return n
  },
})
