import { Ratelimit } from '@upstash/ratelimit'
import { Redis } from '@upstash/redis/cloudflare' // the Workers entry: fetch only, no Node fallbacks
import type { KvScript } from './script'
import type { Kv, LimitResult, LimitRule, RateLimiter } from './types'

// INCRBY, then an expiry if the counter has none: one script, so one round trip and no window without a TTL.
const INCR_WITH_EXPIRY = `local n = redis.call('INCRBY', KEYS[1], ARGV[1])
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return n`

/** Upstash Redis over REST: one client per request (no module-global connections). */
export class UpstashKv implements Kv, RateLimiter {
  private redis: Redis

  constructor(url: string, token: string) {
    this.redis = new Redis({ url, token, automaticDeserialization: false, enableTelemetry: false })
  }

  async get<T>(key: string) {
    const raw = await this.redis.get<string>(key)
    return raw == null ? null : (JSON.parse(raw) as T)
  }

  async set(key: string, value: unknown, opts: { ttlMs?: number; nx?: boolean } = {}) {
    const json = JSON.stringify(value)
    const res = opts.ttlMs
      ? opts.nx
        ? await this.redis.set(key, json, { px: opts.ttlMs, nx: true })
        : await this.redis.set(key, json, { px: opts.ttlMs })
      : opts.nx
        ? await this.redis.set(key, json, { nx: true })
        : await this.redis.set(key, json)
    return res === 'OK'
  }

  async take<T>(key: string) {
    const raw = await this.redis.getdel<string>(key)
    return raw == null ? null : (JSON.parse(raw) as T)
  }

  async del(key: string) {
    await this.redis.del(key)
  }

  async incr(key: string, by: number, ttlMs: number) {
    return Number(await this.redis.eval(INCR_WITH_EXPIRY, [key], [String(by), String(ttlMs)]))
  }

  /** EVALSHA first, EVAL when Redis does not have the script yet (the SDK's `Script.exec`). */
  async eval<R>(script: KvScript<R>, keys: string[], args: (string | number)[]) {
    return (await this.redis.createScript<R>(script.lua).exec(keys, args.map(String))) as R
  }

  async limit(rule: LimitRule, identifier: string): Promise<LimitResult> {
    const limiter = new Ratelimit({
      redis: this.redis,
      limiter: Ratelimit.fixedWindow(rule.limit, `${rule.windowSec} s`),
      prefix: `rl:${rule.name}`,
      ephemeralCache: false,
      analytics: false,
    })
    const { success, limit, remaining, reset } = await limiter.limit(identifier)
    return { success, limit, remaining, reset }
  }
}
