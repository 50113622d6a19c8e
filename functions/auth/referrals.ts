import { and, count, eq, gte, inArray, isNull, sql } from 'drizzle-orm'
import { referrals, users } from '../../schema'
import type { Db } from '../../lib/db/rls'

/** Credits given to each side of a referral (the spec says both are credited, not how much). */
export const REFERRAL_CREDITS = 5
/** Credited referrals per referrer per UTC day; beyond it a referral is recorded but never credited. */
export const REFERRAL_DAILY_CAP = 5

/**
 * Credits both sides of `referredId`'s referral, once, when that account has just verified its email. Runs in
 * the verification transaction (service role). The referrer's row is locked first, so concurrent verifications
 * of its referrals count the day's credits one after another (the cap holds); the conditional update on
 * `credited_at` is what makes a referral credit at most once. Returns whether credits were given.
 */
export async function creditReferral(tx: Db, referredId: string) {
  const [pending] = await tx
    .select({ referrerId: referrals.referrerId })
    .from(referrals)
    .where(and(eq(referrals.referredId, referredId), isNull(referrals.creditedAt)))
  if (!pending) return false
  await tx.select({ id: users.id }).from(users).where(eq(users.id, pending.referrerId)).for('update')
  const [today] = await tx
    .select({ n: count() })
    .from(referrals)
    .where(and(eq(referrals.referrerId, pending.referrerId), gte(referrals.creditedAt, sql`date_trunc('day', now(), 'UTC')`)))
  if (today.n >= REFERRAL_DAILY_CAP) return false
  const [claimed] = await tx
    .update(referrals)
    .set({ creditedAt: sql`now()` })
    .where(and(eq(referrals.referredId, referredId), isNull(referrals.creditedAt)))
    .returning({ referrerId: referrals.referrerId, credits: referrals.credits })
  if (!claimed) return false
  await tx
    .update(users)
    .set({ credits: sql`${users.credits} + ${claimed.credits}` })
    .where(inArray(users.id, [referredId, claimed.referrerId]))
  return true
}
