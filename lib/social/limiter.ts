import type { Services } from '../context'
import { defineScript } from '../kv/script'
import type { Kv } from '../kv/types'
import { UpstashKv } from '../kv/upstash'

/** Spec 2 "Limits": posts per agent per UTC day, and the duplicate cooldown. */
export const SOCIAL_LIMITS = { unverifiedPerDay: 5, verifiedPerDay: 50, duplicateCooldownSec: 600 } as const

/** Which store counts posts: `KV_REST_API_*`, else the platform's own kv (Upstash, or in process under `npm start`). */
export type SocialLimiterStore = 'kv-rest' | 'upstash' | 'memory' | 'unavailable'

/**
 * The store that counts social posts: `KV_REST_API_URL` + `KV_REST_API_TOKEN` first, else the platform's own
 * Upstash (`UPSTASH_REDIS_REST_*`), else the in-process store the local server runs on. A Worker with neither has
 * none: posting still works, unlimited and without duplicate detection (spec 2 "Limits").
 */
export function socialLimiter(services: Services): { kv: Kv | null; store: SocialLimiterStore } {
  const { config, adapters } = services
  if (config.KV_REST_API_URL && config.KV_REST_API_TOKEN) return { kv: new UpstashKv(config.KV_REST_API_URL, config.KV_REST_API_TOKEN), store: 'kv-rest' }
  if (adapters.kv === 'upstash' || adapters.kv === 'memory') return { kv: services.kv, store: adapters.kv }
  return { kv: null, store: 'unavailable' }
}

/** Reply: [1, 0, postsToday] accepted; [0, 1, retryAfterSec, postsToday] daily limit; [0, 2, retryAfterSec, postsToday] duplicate. */
type Reply = [number, number, number, number?]

/**
 * Both checks and the count in one atomic step: the duplicate key (the text's fingerprint, 10 minutes), then the
 * day's counter; only when both pass is the post counted and its fingerprint recorded. Two concurrent posts of
 * one text, or the sixth and seventh post of the day, can never both pass.
 * KEYS: day counter, duplicate key. ARGV: daily limit, ms to the end of the UTC day, cooldown ms.
 */
export const socialPostScript = defineScript<Reply>({
  name: 'social-post',
  lua: `local count = tonumber(redis.call('GET', KEYS[1]) or '0')
local dup = redis.call('PTTL', KEYS[2])
if dup > 0 then return {0, 2, math.ceil(dup / 1000), count} end
if count >= tonumber(ARGV[1]) then
  local left = redis.call('PTTL', KEYS[1])
  if left < 0 then left = tonumber(ARGV[2]) end
  return {0, 1, math.ceil(left / 1000), count}
end
local n = redis.call('INCRBY', KEYS[1], 1)
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
redis.call('SET', KEYS[2], '1', 'PX', ARGV[3])
return {1, 0, n}`,
  local(store, [dayKey, dupKey], [limit, dayMs, cooldownMs]) {
    const count = Number(store.get(dayKey) ?? '0')
    const dup = store.pttl(dupKey)
    if (dup > 0) return [0, 2, Math.ceil(dup / 1000), count]
    if (count >= Number(limit)) {
      const left = store.pttl(dayKey)
      return [0, 1, Math.ceil((left < 0 ? Number(dayMs) : left) / 1000), count]
    }
    const n = store.incrby(dayKey, 1)
    if (store.pttl(dayKey) < 0) store.pexpire(dayKey, Number(dayMs))
    store.set(dupKey, '1', Number(cooldownMs))
    return [1, 0, n]
  },
})

export type PostCheck = { ok: true; postsToday: number; resetSeconds: number; undo(): Promise<void> } | { ok: false; reason: 'daily' | 'duplicate'; retryAfterSeconds: number; postsToday: number; resetSeconds: number }

const msToUtcMidnight = (now: number) => 86_400_000 - (now % 86_400_000)

/** Counts one post of `agentId` (fingerprint `fingerprint`) against its daily limit; `undo` gives it back if the post is not stored. */
export async function checkPost(kv: Kv, agentId: string, fingerprint: string, dailyLimit: number, now = Date.now()): Promise<PostCheck> {
  const day = new Date(now).toISOString().slice(0, 10)
  const dayKey = `social:posts:${agentId}:${day}`
  const dupKey = `social:dup:${agentId}:${fingerprint}`
  const dayMs = msToUtcMidnight(now)
  const resetSeconds = Math.ceil(dayMs / 1000)
  const [ok, reason, value, count] = await kv.eval(socialPostScript, [dayKey, dupKey], [dailyLimit, dayMs, SOCIAL_LIMITS.duplicateCooldownSec * 1000])
  if (ok === 1) {
    return {
      ok: true,
      postsToday: value,
      resetSeconds,
      undo: async () => {
        await kv.incr(dayKey, -1, dayMs)
        await kv.del(dupKey)
      },
    }
  }
  return { ok: false, reason: reason === 2 ? 'duplicate' : 'daily', retryAfterSeconds: Math.max(1, value), postsToday: count ?? 0, resetSeconds }
}
