import { z } from '@hono/zod-openapi'
import { users, type User } from '../../schema'

/** The signed-in user as the dashboard sees it: never the password hash or subscription ids. */
export const UserSchema = z
  .object({
    id: z.string().max(255),
    email: z.string().max(254),
    name: z.string().max(256),
    createdAt: z.string().max(64).openapi({ format: 'date-time' }),
    plan: z.string().max(1024).nullable().openapi({ description: '`solo`, `collective`, `label` or `network`; null until a plan is bought' }),
    subscriptionStatus: z.string().max(1024).openapi({ description: '`inactive` until a subscription starts' }),
    credits: z.number().int().min(-2_147_483_648).max(2_147_483_647).openapi({ format: 'int32' }), // an integer column
    isAdmin: z.boolean().openapi({ description: 'The email is verified and in `ADMIN_EMAILS`' }),
    emailVerified: z.boolean().openapi({ description: 'The address was proven: a mailed link, or a provider that vouches for it' }),
    referralCode: z.string().max(1024).openapi({ description: "The user's own code for others' sign-up (`referralCode`, case-insensitive)" }),
  })
  .openapi('User')

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
  plan: u.plan,
  subscriptionStatus: u.subscriptionStatus,
  credits: u.credits,
  isAdmin,
  emailVerified: !!u.emailVerifiedAt,
  referralCode,
})

export const OkSchema = z.object({ ok: z.literal(true) }).openapi('Ok')
