import type { z } from '@hono/zod-openapi'
import { userPlan } from '../../lib/billing/plans'
import { users, type User } from '../../schema'
import type { UserSchema } from './schemas'

// The signed-in user as `UserSchema` describes it, read from its row.

export type UserRow = Pick<User, 'id' | 'email' | 'name' | 'createdAt' | 'plan' | 'subscriptionStatus' | 'credits' | 'emailVerifiedAt'>

/** The columns `toUserView` reads, for `select` and `returning`. */
export const userColumns = {
  id: users.id,
  email: users.email,
  name: users.name,
  createdAt: users.createdAt,
  plan: users.plan,
  subscriptionStatus: users.subscriptionStatus,
  credits: users.credits,
  emailVerifiedAt: users.emailVerifiedAt,
  referralCode: users.referralCode,
}

/** `referralCode` is the one `ensureReferralCode` (lib/auth/accounts.ts) gave the row. */
export const toUserView = (u: UserRow, isAdmin: boolean, referralCode: string): z.infer<typeof UserSchema> => ({
  id: u.id,
  email: u.email,
  name: u.name,
  createdAt: u.createdAt.toISOString(),
  plan: userPlan(u.plan).plan,
  subscriptionStatus: u.subscriptionStatus,
  credits: u.credits,
  isAdmin,
  emailVerified: !!u.emailVerifiedAt,
  referralCode,
})
