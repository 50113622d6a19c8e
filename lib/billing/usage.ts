import { and, eq, sql } from 'drizzle-orm'
import type { Reader } from '../db/rls'
import type { Kv } from '../kv/types'
import { defineScript } from '../kv/script'
import { ApiError } from '../http/errors'
import { errorFields, log } from '../log'
import { users } from '../../schema'
import { PLANS, type PlanName } from './plans'

/**
 * Daily usage units: one kv counter per user per UTC day (`usage:<userId>:<YYYY-MM-DD>`), created by its first
 * increment with an expiry a little past the day's end, so it resets at midnight UTC without a job.
 *
 * Credits (bought in packs, granted in Postgres once per payment) pay for units once the day's allowance is spent:
 * 1 credit = 100 units. Where the balance lives: Postgres, and only there. `users.credits` counts whole credits and
 * `users.credit_units` the units left of the one credit already opened (0–99), so a user's credit balance in units
 * is `credits * 100 + credit_units`. A spend is two atomic steps, each on the store that owns its number:
 *   1. the kv script `takeAllowance` takes what fits of today's allowance (at most `units`) in one step;
 *   2. the rest, if any, comes from credits by one conditional UPDATE (`... WHERE credits*100 + credit_units >= n
 *      RETURNING`): Postgres checks the balance on the row as it is when its lock is granted, so racing spends
 *      never take more than the balance. If the credits cannot cover it, the units step 1 took are given back and
 *      the call is refused (429 `USAGE_LIMIT`).
 * Neither store can overspend: the counter never goes past the allowance and the balance never below zero. A grant
 * (stripe webhook) only adds to `credits`, in the transaction that records its payment, so nothing is ever moved
 * between the stores and nothing can be granted twice. The one cost of two steps: while a refused call holds
 * allowance units it is about to give back, a concurrent call may see them gone and be refused too (never admitted
 * twice).
 */
const DAY_MS = 24 * 60 * 60 * 1000
// The counter outlives its day by an hour: a read just after midnight still finds yesterday's key harmlessly.
const GRACE_MS = 60 * 60 * 1000
/** How many usage units one credit buys. */
export const UNITS_PER_CREDIT = 100

export interface Usage {
  dailyUnits: number
  used: number
  remaining: number
  /** Next midnight UTC, ISO 8601. */
  resetsAt: string
}

/** A credit balance: whole credits, and all the units they and the opened credit's remainder still pay for. */
export interface CreditBalance {
  credits: number
  creditUnits: number
}

const dayOf = (now: number) => new Date(now).toISOString().slice(0, 10)
export const nextMidnightUtc = (now: number) => Math.floor(now / DAY_MS) * DAY_MS + DAY_MS
const counterKey = (userId: string, now: number) => `usage:${userId}:${dayOf(now)}`

const usageOf = (plan: PlanName, used: number, now: number): Usage => {
  const dailyUnits = PLANS[plan].dailyUnits
  return { dailyUnits, used, remaining: Math.max(0, dailyUnits - used), resetsAt: new Date(nextMidnightUtc(now)).toISOString() }
}

/** A user row's credit balance (`credits`, `credit_units`) as the routes show it. */
export const creditBalance = (row: { credits: number; creditUnits: number } | undefined): CreditBalance => ({
  credits: row?.credits ?? 0,
  creditUnits: (row?.credits ?? 0) * UNITS_PER_CREDIT + (row?.creditUnits ?? 0),
})

/** Today's usage for a user on `plan`: one kv read. */
export async function readUsage(kv: Kv, userId: string, plan: PlanName, now = Date.now()): Promise<Usage> {
  return usageOf(plan, Number((await kv.get<number>(counterKey(userId, now))) ?? 0), now)
}

/**
 * KEYS[1] the day's counter; ARGV: units wanted, the allowance, the counter's expiry (ms). Takes
 * `min(units, allowance - used)` (never below 0) and answers `{taken, used}` after it; the expiry is set when the
 * counter has none, as `Kv.incr` does.
 */
export const takeAllowance = defineScript<[number, number]>({
  name: 'usage-take-allowance',
  lua: `local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local room = tonumber(ARGV[2]) - used
if room < 0 then room = 0 end
local take = math.min(tonumber(ARGV[1]), room)
if take > 0 then
  used = redis.call('INCRBY', KEYS[1], take)
  if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
end
return {take, used}`,
  local(store, [key], [units, allowance, ttlMs]) {
    let used = Number(store.get(key) ?? 0)
    const take = Math.min(Number(units), Math.max(0, Number(allowance) - used))
    if (take > 0) {
      used = store.incrby(key, take)
      if (store.pttl(key) < 0) store.pexpire(key, Number(ttlMs))
    }
    return [take, used]
  },
})

/** The stores a spend touches: the day's counter in kv, the credit balance in Postgres. */
export interface UsageStores {
  kv: Kv
  reader: Reader
}

/** What a spend took, from where, and when (a give-back returns each to where it came from). */
export interface UnitsSpent extends Usage {
  fromAllowance: number
  fromCredits: number
  spentAt: number
  /** The credit balance after the spend; null when credits were not touched (not read). */
  balance: CreditBalance | null
}

const balanceUnits = sql`${users.credits} * ${UNITS_PER_CREDIT} + ${users.creditUnits}`

/**
 * Moves `units` (positive: spend, negative: give back) on `userId`'s credit balance, as the service (`creditSpend`:
 * users cannot write their own credits). A spend is conditional on the balance covering it; null when it does not.
 */
async function moveCredits(reader: Reader, userId: string, units: number): Promise<CreditBalance | null> {
  const after = sql`(${balanceUnits} - ${units})`
  const [row] = await reader.asService('creditSpend', (db) =>
    db
      .update(users)
      .set({ credits: sql`${after} / ${UNITS_PER_CREDIT}`, creditUnits: sql`${after} % ${UNITS_PER_CREDIT}` })
      .where(and(eq(users.id, userId), sql`${balanceUnits} >= ${units}`))
      .returning({ credits: users.credits, creditUnits: users.creditUnits }),
  )
  return row ? creditBalance(row) : null
}

/**
 * Spends `units` for a call: the one function an AI route calls before its work. Today's allowance first (the kv
 * script: what fits of it), then credits for the rest (module comment above); when both together cannot pay, 429
 * `USAGE_LIMIT` (with `resetsAt`) and nothing stays taken. With `byok` the user's own provider key pays: units are
 * counted, not capped, and credits are never touched.
 */
export async function spendUnits(stores: UsageStores, userId: string, plan: PlanName, units: number, opts: { byok?: boolean; now?: number } = {}): Promise<UnitsSpent> {
  const now = opts.now ?? Date.now()
  const key = counterKey(userId, now)
  const ttlMs = nextMidnightUtc(now) - now + GRACE_MS
  if (opts.byok) {
    const used = await stores.kv.incr(key, units, ttlMs)
    return { ...usageOf(plan, used, now), fromAllowance: units, fromCredits: 0, spentAt: now, balance: null }
  }
  const dailyUnits = PLANS[plan].dailyUnits
  const [taken, used] = await stores.kv.eval(takeAllowance, [key], [units, dailyUnits, ttlMs])
  const rest = units - taken
  let balance: CreditBalance | null = null
  if (rest > 0) {
    try {
      balance = await moveCredits(stores.reader, userId, rest)
    } catch (e) {
      // The credits' failure is the answer (503 DATABASE_UNAVAILABLE): a give-back that fails too (the kv store down as
      // well) only costs the user those allowance units today, and is logged rather than answered in its place.
      if (taken > 0) await stores.kv.incr(key, -taken, ttlMs).catch((e2: unknown) => log.error('usage.allowance_not_given_back', { userId, units: taken, ...errorFields(e2) }))
      throw e
    }
    if (!balance) {
      const back = taken > 0 ? await stores.kv.incr(key, -taken, ttlMs) : used
      const resetsAt = usageOf(plan, used, now).resetsAt
      throw new ApiError('USAGE_LIMIT', {
        extra: { dailyUnits, used: Math.min(back, dailyUnits), resetsAt },
        headers: { 'Retry-After': String(Math.ceil((nextMidnightUtc(now) - now) / 1000)) },
      })
    }
  }
  return { ...usageOf(plan, used, now), fromAllowance: taken, fromCredits: rest, spentAt: now, balance }
}

/**
 * Gives back what `spendUnits` took for work that then did not happen (a gateway plugin that failed): credits to the
 * balance, allowance units to the same day's counter, so a refund after midnight never lowers the new day's count.
 */
export async function giveBackUnits(stores: UsageStores, userId: string, spent: Pick<UnitsSpent, 'fromAllowance' | 'fromCredits' | 'spentAt'>, now = Date.now()): Promise<void> {
  if (spent.fromCredits > 0) await moveCredits(stores.reader, userId, -spent.fromCredits)
  if (spent.fromAllowance <= 0 || dayOf(now) !== dayOf(spent.spentAt)) return
  await stores.kv.incr(counterKey(userId, spent.spentAt), -spent.fromAllowance, nextMidnightUtc(now) - now + GRACE_MS)
}
