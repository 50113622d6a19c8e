import { eq, sql } from 'drizzle-orm'
import type { Services } from '../../lib/context'
import type { Reader } from '../../lib/db/rls'
import { defineScript } from '../../lib/kv/script'
import type { Kv } from '../../lib/kv/types'
import { UpstashKv } from '../../lib/kv/upstash'
import { agents } from '../../schema'

/**
 * Spec 2 "Limits": posts per agent per UTC day, and the duplicate cooldown. The account (the user) is capped too,
 * at the sum of its current agents' limits (`accountDailyPostLimit`), so a recreated agent does not reset the day.
 */
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

/**
 * Reply: [1, 0, agentPostsToday, accountPostsToday] accepted; refused: [0, 1, retryAfterSec, agentPostsToday,
 * accountPostsToday] the agent's daily limit, [0, 3, ...] the account's, [0, 2, ...] duplicate.
 */
type Reply = [number, number, number, number?, number?]

/**
 * Both checks and the counts in one atomic step: the duplicate key (the text's fingerprint, 10 minutes), then the
 * agent's day counter, then the account's (the user's posts through any of their agents, deleted ones included);
 * only when all pass is the post counted on both and its fingerprint recorded. Two concurrent posts of one text, or
 * the sixth and seventh post of the day, can never both pass.
 * KEYS: agent day counter, account day counter, duplicate key. ARGV: agent limit, account limit, ms to the end of
 * the UTC day, cooldown ms.
 */
export const socialPostScript = defineScript<Reply>({
  name: 'social-post',
  lua: `local count = tonumber(redis.call('GET', KEYS[1]) or '0')
local total = tonumber(redis.call('GET', KEYS[2]) or '0')
local dup = redis.call('PTTL', KEYS[3])
if dup > 0 then return {0, 2, math.ceil(dup / 1000), count, total} end
local full = 0
local key = KEYS[1]
if count >= tonumber(ARGV[1]) then
  full = 1
elseif total >= tonumber(ARGV[2]) then
  full = 3
  key = KEYS[2]
end
if full > 0 then
  local left = redis.call('PTTL', key)
  if left < 0 then left = tonumber(ARGV[3]) end
  return {0, full, math.ceil(left / 1000), count, total}
end
local n = redis.call('INCRBY', KEYS[1], 1)
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
local t = redis.call('INCRBY', KEYS[2], 1)
if redis.call('PTTL', KEYS[2]) < 0 then redis.call('PEXPIRE', KEYS[2], ARGV[3]) end
redis.call('SET', KEYS[3], '1', 'PX', ARGV[4])
return {1, 0, n, t}`,
  local(store, [dayKey, accountKey, dupKey], [limit, accountLimit, dayMs, cooldownMs]) {
    const count = Number(store.get(dayKey) ?? '0')
    const total = Number(store.get(accountKey) ?? '0')
    const dup = store.pttl(dupKey)
    if (dup > 0) return [0, 2, Math.ceil(dup / 1000), count, total]
    const full = count >= Number(limit) ? 1 : total >= Number(accountLimit) ? 3 : 0
    if (full > 0) {
      const left = store.pttl(full === 1 ? dayKey : accountKey)
      return [0, full, Math.ceil((left < 0 ? Number(dayMs) : left) / 1000), count, total]
    }
    const n = store.incrby(dayKey, 1)
    if (store.pttl(dayKey) < 0) store.pexpire(dayKey, Number(dayMs))
    const t = store.incrby(accountKey, 1)
    if (store.pttl(accountKey) < 0) store.pexpire(accountKey, Number(dayMs))
    store.set(dupKey, '1', Number(cooldownMs))
    return [1, 0, n, t]
  },
})

export interface PostLimits {
  /** The agent's posts per UTC day (5, or 50 when `human_verified`). */
  agent: number
  /** The account's posts per UTC day, all its agents together: `accountDailyPostLimit`. */
  account: number
}

interface PostCounts {
  /** The agent's posts today. */
  postsToday: number
  /** The account's posts today, through any of its agents (deleted ones included). */
  accountPostsToday: number
  resetSeconds: number
}

export type PostCheck =
  | ({ ok: true; undo(): Promise<void> } & PostCounts)
  | ({ ok: false; reason: 'daily' | 'account' | 'duplicate'; retryAfterSeconds: number } & PostCounts)

const msToUtcMidnight = (now: number) => 86_400_000 - (now % 86_400_000)

/**
 * The account's daily cap: the sum of the daily limits of the agents it has now (5 each, 50 each `human_verified`).
 * Its counter outlives the agents, so deleting an agent and creating another does not give the day back: the new
 * agent's own counter starts at zero, the account's does not, and the cap has not grown. The cap is what the
 * account's current agents could post together in a day.
 */
export async function accountDailyPostLimit(reader: Reader, userId: string): Promise<number> {
  const [row] = await reader.asUser(userId, (db) =>
    db
      .select({
        all: sql<number>`count(*)`.mapWith(Number),
        verified: sql<number>`count(*) filter (where ${agents.verification} = 'human_verified')`.mapWith(Number),
      })
      .from(agents)
      .where(eq(agents.userId, userId)),
  )
  const verified = row?.verified ?? 0
  return verified * SOCIAL_LIMITS.verifiedPerDay + ((row?.all ?? 0) - verified) * SOCIAL_LIMITS.unverifiedPerDay
}

/**
 * Counts one post of `agentId` (its owner `userId`, fingerprint `fingerprint`) against the agent's and the account's
 * daily limits; `undo` gives it back to both if the post is not stored.
 */
export async function checkPost(
  kv: Kv,
  poster: { agentId: string; userId: string },
  fingerprint: string,
  limits: PostLimits,
  now = Date.now(),
): Promise<PostCheck> {
  const day = new Date(now).toISOString().slice(0, 10)
  const dayKey = `social:posts:${poster.agentId}:${day}`
  const accountKey = `social:account-posts:${poster.userId}:${day}`
  const dupKey = `social:dup:${poster.agentId}:${fingerprint}`
  const dayMs = msToUtcMidnight(now)
  const resetSeconds = Math.ceil(dayMs / 1000)
  const reply = await kv.eval(socialPostScript, [dayKey, accountKey, dupKey], [
    limits.agent,
    limits.account,
    dayMs,
    SOCIAL_LIMITS.duplicateCooldownSec * 1000,
  ])
  if (reply[0] === 1) {
    const [, , postsToday, accountPostsToday = 0] = reply
    return {
      ok: true,
      postsToday,
      accountPostsToday,
      resetSeconds,
      undo: async () => {
        await kv.incr(dayKey, -1, dayMs)
        await kv.incr(accountKey, -1, dayMs)
        await kv.del(dupKey)
      },
    }
  }
  const [, reason, retryAfter, postsToday = 0, accountPostsToday = 0] = reply
  return {
    ok: false,
    reason: reason === 2 ? 'duplicate' : reason === 3 ? 'account' : 'daily',
    retryAfterSeconds: Math.max(1, retryAfter),
    postsToday,
    accountPostsToday,
    resetSeconds,
  }
}
