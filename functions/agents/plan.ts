import { eq } from 'drizzle-orm'
import type { PlanRecord } from '../../lib/billing/plans'
import type { Db } from '../../lib/db/client'
import { withUser } from '../../lib/db/rls'
import { ApiError } from '../../lib/http/errors'
import { users } from '../../schema'

/** The stored fields of `userId` that decide provisioning (plan, subscription status, trial), read as that user. */
export async function planRecord(db: Db, userId: string): Promise<PlanRecord> {
  const [row] = await withUser(db, userId, (tx) =>
    tx.select({ plan: users.plan, subscriptionStatus: users.subscriptionStatus, trialEndsAt: users.trialEndsAt }).from(users).where(eq(users.id, userId)).limit(1),
  )
  if (!row) throw new ApiError(401, 'Unauthorized', { code: 'UNAUTHORIZED' })
  return row
}
