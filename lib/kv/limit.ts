import type { Kv, LimitResult, LimitRule } from './types'

/**
 * The fixed-window limit both adapters run (`RateLimiter.limit`): one counter per rule, identifier and window,
 * `rl:<rule name>:<identifier>:<window number>`, counted by `Kv.incr` (one atomic step, one round trip) and expiring
 * when its window ends. `now` is the adapter's clock: windows are numbered from the epoch, so every caller agrees.
 */
export async function fixedWindowLimit(kv: Kv, now: number, rule: LimitRule, identifier: string): Promise<LimitResult> {
  const windowMs = rule.windowSec * 1000
  const window = Math.floor(now / windowMs)
  const reset = (window + 1) * windowMs
  const used = await kv.incr(`rl:${rule.name}:${identifier}:${window}`, 1, reset - now)
  return { success: used <= rule.limit, limit: rule.limit, remaining: Math.max(0, rule.limit - used), reset }
}
