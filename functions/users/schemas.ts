import { z } from '@hono/zod-openapi'

/** The signed-in user as the dashboard sees it: never the password hash or subscription ids. */
export const UserSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    name: z.string(),
    createdAt: z.string().openapi({ format: 'date-time' }),
    plan: z.string().nullable().openapi({ description: '`solo`, `collective`, `label` or `network`; null until a plan is bought' }),
    subscriptionStatus: z.string().openapi({ description: '`inactive` until a subscription starts' }),
    credits: z.number().int(),
    isAdmin: z.boolean().openapi({ description: 'The email is verified and in `ADMIN_EMAILS`' }),
    emailVerified: z.boolean().openapi({ description: 'The address was proven: a mailed link, or a provider that vouches for it' }),
    referralCode: z.string().openapi({ description: "The user's own code for others' sign-up (`referralCode`, case-insensitive)" }),
  })
  .openapi('User')

export const OkSchema = z.object({ ok: z.literal(true) }).openapi('Ok')
