import type { Config } from '../../lib/config'
import { ApiError } from '../../lib/http/errors'
import { defineScript } from '../../lib/kv/script'
import type { Kv } from '../../lib/kv/types'

/**
 * The chat workload gate: what `POST /api/gateway/chat` must pass after the per-IP limit. Four limits, checked and
 * spent in one kv script so that concurrent chats in any number of isolates never overshoot:
 *
 * - concurrent slots per user and platform-wide: a job holds a ticket (its id in a sorted set scored by the
 *   ticket's expiry) from admission until it ends (`releaseTicket`) or the ticket expires;
 * - slots spent per calendar minute, per user and platform-wide: counters that expire at the minute's end.
 *
 * A message over 800 characters weighs 2 slots (spec "Limits"), else 1; a ticket of weight 2 is two members
 * (`<jobId>` and `<jobId>#2`), so ZCARD is the slots in use. A refusal says when to retry: when enough tickets
 * expire to fit, or the minute's end.
 *
 * The clock is the kv store's (`redis.call('TIME')` in Lua; the in-process store's clock locally), never the
 * isolate's: isolates' clocks differ, and expiry scores written by one are compared by another.
 */

/** Characters over which a message weighs 2 slots. */
export const LONG_MESSAGE_CHARS = 800

export const chatWeight = (message: string) => (message.length > LONG_MESSAGE_CHARS ? 2 : 1)

export type GateRefusal = 'user_slots' | 'global_slots' | 'user_minute' | 'global_minute'

export interface GateLimits {
  userSlots: number
  globalSlots: number
  userPerMinute: number
  globalPerMinute: number
  ticketTtlMs: number
}

export const gateLimits = (config: Config): GateLimits => ({
  userSlots: config.CHAT_USER_SLOTS,
  globalSlots: config.CHAT_GLOBAL_SLOTS,
  userPerMinute: config.CHAT_USER_PER_MINUTE,
  globalPerMinute: config.CHAT_GLOBAL_PER_MINUTE,
  ticketTtlMs: config.CHAT_TICKET_TTL_SEC * 1000,
})

/**
 * The gate's keys. One hash tag (`{…}`) for all of them, so the script's keys share a slot on a Redis cluster.
 * `namespace` separates deployments (or test runs) sharing one Redis.
 */
export function gateKeys(namespace: string, userId: string) {
  const tag = `{${namespace}:gate}`
  return {
    userSlots: `${tag}:slots:user:${userId}`,
    globalSlots: `${tag}:slots:all`,
    userMinute: `${tag}:minute:user:${userId}`,
    globalMinute: `${tag}:minute:all`,
  }
}

const keyList = (k: ReturnType<typeof gateKeys>) => [k.userSlots, k.globalSlots, k.userMinute, k.globalMinute]

/** The members a ticket of `weight` holds. */
const members = (jobId: string, weight: number) => Array.from({ length: weight }, (_, i) => (i === 0 ? jobId : `${jobId}#${i + 1}`))

const MINUTE_MS = 60_000

/**
 * KEYS: user slots, global slots, user minute, global minute. ARGV: job id, weight, user slots, global slots,
 * user per minute, global per minute, ticket ttl ms. Reply `{1, '', 0}` admitted, else `{0, reason, retryMs}`.
 */
export const admitScript = defineScript<[number, GateRefusal | '', number]>({
  name: 'chat-gate-admit',
  lua: `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local job, w, ttl = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[7])
local minuteLeft = 60000 - now % 60000
local function slotsFull(key, limit)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  local used = redis.call('ZCARD', key)
  if used + w <= limit then return nil end
  local rank = used + w - limit - 1
  local hit = redis.call('ZRANGE', key, rank, rank, 'WITHSCORES')
  if hit[2] == nil then return ttl end
  return math.max(1, tonumber(hit[2]) - now)
end
local function minuteFull(key, limit)
  if tonumber(redis.call('GET', key) or '0') + w <= limit then return nil end
  return minuteLeft
end
local wait = slotsFull(KEYS[1], tonumber(ARGV[3]))
if wait then return {0, 'user_slots', wait} end
wait = slotsFull(KEYS[2], tonumber(ARGV[4]))
if wait then return {0, 'global_slots', wait} end
wait = minuteFull(KEYS[3], tonumber(ARGV[5]))
if wait then return {0, 'user_minute', wait} end
wait = minuteFull(KEYS[4], tonumber(ARGV[6]))
if wait then return {0, 'global_minute', wait} end
for i = 1, w do
  local member = job
  if i > 1 then member = job .. '#' .. i end
  redis.call('ZADD', KEYS[1], now + ttl, member)
  redis.call('ZADD', KEYS[2], now + ttl, member)
end
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
for i = 3, 4 do
  redis.call('INCRBY', KEYS[i], w)
  if redis.call('PTTL', KEYS[i]) < 0 then redis.call('PEXPIRE', KEYS[i], minuteLeft) end
end
return {1, '', 0}`,
  local(store, keys, [job, weight, userSlots, globalSlots, userPerMinute, globalPerMinute, ttlArg]) {
    const now = store.now()
    const w = Number(weight)
    const ttl = Number(ttlArg)
    const minuteLeft = MINUTE_MS - (now % MINUTE_MS)
    const slotsFull = (key: string, limit: number) => {
      store.zremrangebyscore(key, -Infinity, now)
      const used = store.zcard(key)
      if (used + w <= limit) return null
      const rank = used + w - limit - 1
      const [hit] = store.zrangeWithScores(key, rank, rank)
      return hit ? Math.max(1, hit[1] - now) : ttl
    }
    const minuteFull = (key: string, limit: number) => (Number(store.get(key) ?? 0) + w <= limit ? null : minuteLeft)
    const checks: Array<[GateRefusal, () => number | null]> = [
      ['user_slots', () => slotsFull(keys[0], Number(userSlots))],
      ['global_slots', () => slotsFull(keys[1], Number(globalSlots))],
      ['user_minute', () => minuteFull(keys[2], Number(userPerMinute))],
      ['global_minute', () => minuteFull(keys[3], Number(globalPerMinute))],
    ]
    for (const [reason, check] of checks) {
      const wait = check()
      if (wait !== null) return [0, reason, wait]
    }
    for (const member of members(job, w)) {
      store.zadd(keys[0], now + ttl, member)
      store.zadd(keys[1], now + ttl, member)
    }
    store.pexpire(keys[0], ttl)
    store.pexpire(keys[1], ttl)
    for (const key of [keys[2], keys[3]]) {
      store.incrby(key, w)
      if (store.pttl(key) < 0) store.pexpire(key, minuteLeft)
    }
    return [1, '', 0]
  },
})

/** KEYS: user slots, global slots. ARGV: the ticket's members. Reply: members removed from the user's set. */
export const releaseScript = defineScript<number>({
  name: 'chat-gate-release',
  lua: `local removed = 0
for i = 1, #ARGV do
  removed = removed + redis.call('ZREM', KEYS[1], ARGV[i])
  redis.call('ZREM', KEYS[2], ARGV[i])
end
return removed`,
  local(store, [userSlots, globalSlots], ticket) {
    let removed = 0
    for (const member of ticket) {
      removed += store.zrem(userSlots, member)
      store.zrem(globalSlots, member)
    }
    return removed
  },
})

export interface Ticket {
  userId: string
  jobId: string
  weight: number
}

const REFUSALS: Record<GateRefusal, string> = {
  user_slots: 'Too many chats in progress',
  global_slots: 'The platform is busy',
  user_minute: 'Chat limit reached for this minute',
  global_minute: 'The platform is busy',
}

/** Takes a ticket for `ticket.jobId`, or throws 429 `WORKLOAD_LIMIT` with `retryAfterSeconds` (and `Retry-After`). */
export async function admitTicket(kv: Kv, config: Config, ticket: Ticket): Promise<void> {
  const limits = gateLimits(config)
  const keys = keyList(gateKeys(config.CHAT_GATE_NAMESPACE, ticket.userId))
  const args = [ticket.jobId, ticket.weight, limits.userSlots, limits.globalSlots, limits.userPerMinute, limits.globalPerMinute, limits.ticketTtlMs]
  const [admitted, reason, retryMs] = await kv.eval(admitScript, keys, args)
  if (admitted === 1) return
  const retryAfterSeconds = Math.max(1, Math.ceil(Number(retryMs) / 1000))
  const refusal = reason as GateRefusal
  throw new ApiError('WORKLOAD_LIMIT', { message: REFUSALS[refusal] ?? 'Too many chats in progress', extra: { retryAfterSeconds, reason: refusal }, headers: { 'Retry-After': String(retryAfterSeconds) } })
}

/** Gives the ticket's slots back (its job ended); a ticket already expired or released changes nothing. */
export async function releaseTicket(kv: Kv, config: Config, ticket: Ticket): Promise<void> {
  const k = gateKeys(config.CHAT_GATE_NAMESPACE, ticket.userId)
  await kv.eval(releaseScript, [k.userSlots, k.globalSlots], members(ticket.jobId, ticket.weight))
}
