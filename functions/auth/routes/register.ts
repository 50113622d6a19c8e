import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { eq, sql } from 'drizzle-orm'
import { rejectScriptedAgents, verifyTurnstile } from '../../../lib/auth/bot'
import { newUserValues } from '../../../lib/auth/accounts'
import { hashSecret } from '../../../lib/auth/password'
import type { AppEnv } from '../../../lib/context'
import type { Db } from '../../../lib/db/client'
import { ApiError } from '../../../lib/http/errors'
import { emailField, newPasswordField } from '../../../lib/http/fields'
import { errorResponse } from '../../../lib/http/openapi'
import { jsonBody } from '../../../lib/http/validation'
import { inviteTokenField, redeemInvite } from '../../../lib/invites'
import { referrals, users } from '../../../schema'

/** Credits given to each side of a referral (the spec says both are credited, not how much). */
export const REFERRAL_CREDITS = 5

const RegisterBody = z
  .object({
    email: emailField(),
    password: newPasswordField(),
    name: z.string().trim().max(100, 'Name must be at most 100 characters').optional(),
    referralCode: z
      .string({ error: 'Invalid referral code' })
      .regex(/^[A-Za-z0-9-]{1,20}$/, 'Invalid referral code')
      .optional(),
    token: inviteTokenField().optional().openapi({ description: 'An invite token (64 hex) to redeem with this sign-up' }),
    'cf-turnstile-response': z.string().max(2048).optional(),
  })
  .openapi('RegisterRequest')

export const route = createRoute({
  method: 'post',
  path: '/api/register',
  tags: ['Auth'],
  summary: 'Sign up',
  description:
    'Creates the account and starts its 7-day trial; no session is created (sign in next). Emails are stored ' +
    `lower-cased. A referral code (case-insensitive) credits ${REFERRAL_CREDITS} credits to both users in the same ` +
    'transaction. Bot detection: an empty or scripted User-Agent is 403; with `TURNSTILE_SECRET_KEY` set, a valid ' +
    'Turnstile token is required. Rate limited per IP (10 per hour). An invite `token` is redeemed in the same ' +
    'transaction (marked used by the new user): an unknown token is 400, a used or expired one 410, and an invite ' +
    'made for an email accepts only that email (case-insensitive), else 403. Any of these creates no user; of ' +
    'concurrent sign-ups with one token exactly one succeeds.',
  middleware: [rejectScriptedAgents] as const,
  request: { body: jsonBody(RegisterBody) },
  responses: {
    201: {
      description: 'Created',
      content: { 'application/json': { schema: z.object({ id: z.string(), email: z.string(), name: z.string() }) } },
    },
    400: errorResponse('Missing or invalid email, short password, invalid referral code, malformed (`VALIDATION`) or unknown `Invalid invite token`'),
    403: errorResponse('Bot detection (`BOT_DETECTED`); or `Invite is for another email`'),
    409: errorResponse('User already exists'),
    410: errorResponse('`Invite already used` or `Invite expired`'),
    429: errorResponse('Too many requests'),
  },
})

const isUniqueViolation = (e: unknown) =>
  (e as { code?: string })?.code === '23505' || (e as { cause?: { code?: string } })?.cause?.code === '23505'

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const body = c.req.valid('json')
  await verifyTurnstile(c, body['cf-turnstile-response'])
  const { db, config } = c.var.services
  const passwordHash = await hashSecret(body.password, config.PASSWORD_HASH_COST)
  const values = newUserValues({ email: body.email, name: body.name, passwordHash })
  try {
    const user = await db.transaction(async (tx) => {
      const referrerId = body.referralCode ? await findReferrer(tx as unknown as Db, body.referralCode) : null
      const [created] = await tx
        .insert(users)
        .values({ ...values, credits: referrerId ? REFERRAL_CREDITS : 0 })
        .returning({ id: users.id, email: users.email, name: users.name })
      if (referrerId) {
        await tx.insert(referrals).values({ referrerId, referredId: created.id, credits: REFERRAL_CREDITS })
        await tx.update(users).set({ credits: sql`${users.credits} + ${REFERRAL_CREDITS}` }).where(eq(users.id, referrerId))
      }
      // After the insert: a duplicate email is 409 before any invite is claimed; a failed claim rolls the user back.
      if (body.token) await redeemInvite(tx as unknown as Db, body.token, values.email, created.id)
      return created
    })
    return c.json(user, 201)
  } catch (e) {
    if (isUniqueViolation(e)) throw new ApiError(409, 'User already exists')
    throw e
  }
}

async function findReferrer(tx: Db, code: string) {
  const [referrer] = await tx.select({ id: users.id }).from(users).where(eq(users.referralCode, code.toUpperCase()))
  if (!referrer) throw new ApiError(400, 'Invalid referral code')
  return referrer.id
}
