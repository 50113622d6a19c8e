import { z } from '@hono/zod-openapi'
import { PLAN_NAMES } from '../../lib/billing/plans'

/** The signed-in user as the dashboard sees it: never the password hash or subscription ids. */
export const UserSchema = z
  .object({
    id: z.string().max(255),
    email: z.string().max(254),
    name: z.string().max(256),
    createdAt: z.string().max(64).openapi({ format: 'date-time' }),
    plan: z.enum(PLAN_NAMES).openapi({
      description: 'The plan the user is on, as both validate-key routes show it: `solo` until a plan is bought (`subscriptionStatus` is then `inactive`)',
    }),
    subscriptionStatus: z.string().max(1024).openapi({ description: '`inactive` until a subscription starts' }),
    credits: z.number().int().min(-2_147_483_648).max(2_147_483_647).openapi({ format: 'int32' }), // an integer column
    isAdmin: z.boolean().openapi({ description: 'The email is verified and in `ADMIN_EMAILS`' }),
    emailVerified: z.boolean().openapi({ description: 'The address was proven: a mailed link, or a provider that vouches for it' }),
    referralCode: z.string().max(1024).openapi({ description: "The user's own code for others' sign-up (`referralCode`, case-insensitive)" }),
  })
  .openapi('User')

export const OkSchema = z.object({ ok: z.literal(true) }).openapi('Ok')
