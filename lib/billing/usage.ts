import type { Kv } from '../kv/types'
import { ApiError } from '../http/errors'
import { PLANS, type PlanName } from './plans'

/**
 * Daily usage units: one kv counter per user per UTC day (`usage:<userId>:<YYYY-MM-DD>`), created by its first
 * increment with an expiry a little past the day's end, so it resets at midnight UTC without a job.
 */
const DAY_MS = 24 * 60 * 60 * 1000
// The counter outlives its day by an hour: a read just after midnight still finds yesterday's key harmlessly.
const GRACE_MS = 60 * 60 * 1000

export interface Usage {
  dailyUnits: number
  used: number
  remaining: number
  /** Next midnight UTC, ISO 8601. */
  resetsAt: string
}

const dayOf = (now: number) => new Date(now).toISOString().slice(0, 10)
export const nextMidnightUtc = (now: number) => Math.floor(now / DAY_MS) * DAY_MS + DAY_MS
const counterKey = (userId: string, now: number) => `usage:${userId}:${dayOf(now)}`

const usageOf = (plan: PlanName, used: number, now: number): Usage => {
  const dailyUnits = PLANS[plan].dailyUnits
  return { dailyUnits, used, remaining: Math.max(0, dailyUnits - used), resetsAt: new Date(nextMidnightUtc(now)).toISOString() }
}

/** Today's usage for a user on `plan`: one kv read. */
export async function readUsage(kv: Kv, userId: string, plan: PlanName, now = Date.now()): Promise<Usage> {
  return usageOf(plan, Number((await kv.get<number>(counterKey(userId, now))) ?? 0), now)
}

/**
 * Spends `units` of today's allowance: the one function an AI route calls before its work (none spends yet). One atomic
 * increment; if it went past the allowance the units are given back and the call is refused (429
 * `USAGE_LIMIT`, with `resetsAt`). With `byok` the user's own provider key pays: units are counted, not capped.
 */
export async function spendUnits(kv: Kv, userId: string, plan: PlanName, units: number, opts: { byok?: boolean; now?: number } = {}): Promise<Usage> {
  const now = opts.now ?? Date.now()
  const key = counterKey(userId, now)
  const ttlMs = nextMidnightUtc(now) - now + GRACE_MS
  const used = await kv.incr(key, units, ttlMs)
  const usage = usageOf(plan, used, now)
  if (!opts.byok && used > usage.dailyUnits) {
    const back = await kv.incr(key, -units, ttlMs)
    throw new ApiError('USAGE_LIMIT', { extra: { dailyUnits: usage.dailyUnits, used: Math.min(back, usage.dailyUnits), resetsAt: usage.resetsAt }, headers: { 'Retry-After': String(Math.ceil((nextMidnightUtc(now) - now) / 1000)) } })
  }
  return usage
}

/**
 * Gives back `units` that `spendUnits` took at `spentAt` for work that then did not happen (a gateway plugin that
 * failed): the same day's counter, so a refund after midnight never lowers the new day's count.
 */
export async function giveBackUnits(kv: Kv, userId: string, units: number, spentAt: number): Promise<void> {
  const now = Date.now()
  if (dayOf(now) !== dayOf(spentAt)) return
  await kv.incr(counterKey(userId, spentAt), -units, nextMidnightUtc(now) - now + GRACE_MS)
}
