import { eq } from 'drizzle-orm'
import type { Context } from 'hono'
import { createMiddleware } from 'hono/factory'
import { users } from '../../schema'
import { type AccessConfig, accessPlan, normalizePlan, type PlanName, type PlanRecord } from '../billing/plans'
import type { AppEnv, Services } from '../context'
import type { Db } from '../db/rls'
import { withUser } from '../db/rls'
import { ApiError } from '../http/errors'
import { isVerifiedAdmin } from './accounts'

const mismatch = () => new ApiError('SUBSCRIPTION_MISMATCH')
/** The answer of every use without paid access (0-decisions "Access over time"). */
export const planRequired = () => new ApiError('PLAN_REQUIRED')

/** Paid access in a route's documentation (lib/billing/plans.ts `accessPlan`). */
export const PAID_ACCESS_RULE =
  'a plan whose subscription is `active` or `past_due`, or the 7-day trial of an account with a verified real mailbox ' +
  '(a confirmed email or Google’s; a wallet or Farcaster address is not one); verified admins are exempt'
/** The 402 of a route in the use list, in its documentation. */
export const PLAN_REQUIRED_DOC = '`Paid plan required`: no paid access at the moment of use (`PLAN_REQUIRED`)'

/** The columns of `users` that `accessPlan` reads. */
export const PLAN_RECORD_COLUMNS = {
  plan: users.plan,
  subscriptionStatus: users.subscriptionStatus,
  trialEndsAt: users.trialEndsAt,
  email: users.email,
  emailVerifiedAt: users.emailVerifiedAt,
}

/** The stored fields of `userId` that decide paid access, read as that user; 401 when the account is gone. */
export async function planRecord(db: Db, userId: string): Promise<PlanRecord> {
  const [row] = await withUser(db, userId, (tx) => tx.select(PLAN_RECORD_COLUMNS).from(users).where(eq(users.id, userId)).limit(1))
  if (!row) throw new ApiError('UNAUTHORIZED')
  return row
}

/**
 * The gate of every use of an agent or of paid compute (0-decisions "Access over time"): the user's paid access is
 * read from their stored row at the moment of use (never from a session, which outlives a lapse) and decided by
 * `accessPlan`; without it, 402 `Paid plan required` (`PLAN_REQUIRED`). `userId` is whoever pays for the use: the
 * caller of a session or an API key, or the owner of the agent acted on. Answers the plan whose limits apply
 * (an admin's `network`, a trial's `solo`) with the record.
 */
export async function requirePaidAccess(
  services: Pick<Services, 'db' | 'config'>,
  userId: string,
  now = Date.now(),
): Promise<{ plan: PlanName; record: PlanRecord }> {
  const record = await planRecord(services.db, userId)
  return { plan: assertPaidAccess(record, services.config, now), record }
}

/** `requirePaidAccess` on a record already read with the route's own query (`PLAN_RECORD_COLUMNS`): its plan, or 402. */
export function assertPaidAccess(record: PlanRecord, config: AccessConfig, now = Date.now()): PlanName {
  const plan = accessPlan(record, config, now)
  if (!plan) throw planRequired()
  return plan
}
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
 * 402 `PLAN_REQUIRED`, and so is a caller without paid access (`accessPlan`: a plan with an active or past-due
 * subscription, or the trial with a verified real mailbox); admins (listed and verified) bypass payment.
 * Without a database the headers alone are used: a claimed plan is taken, no claim is no paid plan. A database
 * that is configured but failing is an error, never a reason to trust the headers. Sets `c.var.plan` to the plan
 * whose limits apply (a trial's is `solo`; an admin's their stored plan, `solo` without one).
 */
export const requirePlanMatch = createMiddleware<AppEnv>(async (c, next) => {
  const userId = c.var.identity?.userId ?? c.var.user?.id
  if (!userId) throw new ApiError('UNAUTHORIZED')
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
      .select({ ...PLAN_RECORD_COLUMNS, subscriptionId: users.subscriptionId })
      .from(users)
      .where(eq(users.id, userId))
      .limit(1),
  )
  if (!stored) throw mismatch()
  if (isFree(stored.plan)) throw planRequired()
  // A record with no plan backs no claim (normalizePlan alone would read it as `solo`).
  if (claimedPlan && (!stored.plan || normalizePlan(claimedPlan) !== normalizePlan(stored.plan))) throw mismatch()
  if (claimedSubscription !== undefined && claimedSubscription !== stored.subscriptionId) throw mismatch()
  const { config } = c.var.services
  const plan = accessPlan(stored, config)
  if (!plan) throw planRequired()
  // An admin's AI allowance stays their stored plan's (solo without one): exempt from payment, not from the limits.
  c.set('plan', isVerifiedAdmin(config, stored) ? normalizePlan(stored.plan) : plan)
  await next()
})
