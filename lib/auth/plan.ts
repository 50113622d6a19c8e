import { eq } from 'drizzle-orm'
import type { Context } from 'hono'
import { createMiddleware } from 'hono/factory'
import { users } from '../../schema'
import { hasPaidAccess, normalizePlan } from '../billing/plans'
import type { AppEnv } from '../context'
import type { Db } from '../db/client'
import { withUser } from '../db/rls'
import { ApiError } from '../http/errors'
import { isAdmin } from './session'

const mismatch = () => new ApiError(402, 'Subscription mismatch', { code: 'SUBSCRIPTION_MISMATCH' })
const planRequired = () => new ApiError(402, 'Paid plan required', { code: 'PLAN_REQUIRED' })
const isFree = (plan: string | null | undefined) => plan?.trim().toLowerCase() === 'free'

/** The store, or null when this deployment has none (the getter answers 503 "Database not configured"). */
function optionalDb(c: Context<AppEnv>): Db | null {
  try {
    return c.var.services.db
  } catch (e) {
    if (e instanceof ApiError && e.status === 503) return null
    throw e
  }
}

/**
 * Spec "Authentication" 7, for AI routes; runs after `identityHeaders` or a session middleware (401
 * without either). `x-user-plan` (compared after `normalizePlan`, so legacy names match their plan) and
 * `x-subscription-id` (exact), when sent, must agree with the caller's stored record: else 402
 * `SUBSCRIPTION_MISMATCH`, as is an id with no record. The deprecated `free` plan, claimed or stored, is
 * 402 `PLAN_REQUIRED`, and so is a caller with no paid plan once the trial is over (`hasPaidAccess`: a plan
 * with an active or past-due subscription, or a live trial); admins (listed and verified) bypass payment.
 * Without a database the headers alone are used: a claimed plan is taken, no claim is no paid plan. A database
 * that is configured but failing is an error, never a reason to trust the headers. Sets `c.var.plan` (a trial
 * or an admin with no plan is on `solo`).
 */
export const requirePlanMatch = createMiddleware<AppEnv>(async (c, next) => {
  const userId = c.var.identity?.userId ?? c.var.user?.id
  if (!userId) throw new ApiError(401, 'Unauthorized', { code: 'UNAUTHORIZED' })
  const claimedPlan = c.req.header('x-user-plan')
  const claimedSubscription = c.req.header('x-subscription-id')
  if (isFree(claimedPlan)) throw planRequired()

  const db = optionalDb(c)
  if (!db) {
    if (!claimedPlan) throw planRequired()
    c.set('plan', normalizePlan(claimedPlan))
    return next()
  }
  // The caller's own row: as that user (identity headers and sessions both name one).
  const [stored] = await withUser(db, userId, (tx) =>
    tx
      .select({
        plan: users.plan,
        subscriptionId: users.subscriptionId,
        subscriptionStatus: users.subscriptionStatus,
        trialEndsAt: users.trialEndsAt,
        email: users.email,
        emailVerifiedAt: users.emailVerifiedAt,
      })
      .from(users)
      .where(eq(users.id, userId))
      .limit(1),
  )
  if (!stored) throw mismatch()
  if (isFree(stored.plan)) throw planRequired()
  // A record with no plan backs no claim (normalizePlan alone would read it as `solo`).
  if (claimedPlan && (!stored.plan || normalizePlan(claimedPlan) !== normalizePlan(stored.plan))) throw mismatch()
  if (claimedSubscription !== undefined && claimedSubscription !== stored.subscriptionId) throw mismatch()
  const admin = c.var.user ? c.var.user.isAdmin : isAdmin(c, stored)
  if (!admin && !hasPaidAccess(stored)) throw planRequired()
  c.set('plan', normalizePlan(stored.plan))
  await next()
})
