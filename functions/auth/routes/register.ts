import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { eq, sql } from 'drizzle-orm'
import { rejectScriptedAgents, verifyTurnstile } from '../../../lib/auth/bot'
import { hashSecret } from '../../../lib/auth/password'
import type { AppEnv } from '../../../lib/context'
import type { Db } from '../../../lib/db/client'
import { ApiError } from '../../../lib/http/errors'
import { emailField, newPasswordField } from '../../../lib/http/fields'
import { errorResponse } from '../../../lib/http/openapi'
import { jsonBody } from '../../../lib/http/validation'
import { referrals, users } from '../../../schema'

export const TRIAL_DAYS = 7
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
    'Turnstile token is required. Rate limited per IP (10 per hour).',
  middleware: [rejectScriptedAgents] as const,
  request: { body: jsonBody(RegisterBody) },
  responses: {
    201: {
      description: 'Created',
      content: { 'application/json': { schema: z.object({ id: z.string(), email: z.string(), name: z.string() }) } },
    },
    400: errorResponse('Missing or invalid email, short password, invalid referral code'),
    403: errorResponse('Bot detection (`BOT_DETECTED`)'),
    409: errorResponse('User already exists'),
    429: errorResponse('Too many requests'),
  },
})

const newReferralCode = () => crypto.randomUUID().replace(/-/g, '').slice(0, 10).toUpperCase()
const isUniqueViolation = (e: unknown) =>
  (e as { code?: string })?.code === '23505' || (e as { cause?: { code?: string } })?.cause?.code === '23505'

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const body = c.req.valid('json')
  await verifyTurnstile(c, body['cf-turnstile-response'])
  const { db, config } = c.var.services
  const email = body.email.toLowerCase()
  const passwordHash = await hashSecret(body.password, config.PASSWORD_HASH_COST)
  const now = new Date()
  try {
    const user = await db.transaction(async (tx) => {
      const referrerId = body.referralCode ? await findReferrer(tx as unknown as Db, body.referralCode) : null
      const [created] = await tx
        .insert(users)
        .values({
          email,
          name: body.name || email,
          passwordHash,
          referralCode: newReferralCode(),
          trialStartedAt: now,
          trialEndsAt: new Date(now.getTime() + TRIAL_DAYS * 24 * 60 * 60 * 1000),
          credits: referrerId ? REFERRAL_CREDITS : 0,
        })
        .returning({ id: users.id, email: users.email, name: users.name })
      if (referrerId) {
        await tx.insert(referrals).values({ referrerId, referredId: created.id, credits: REFERRAL_CREDITS })
        await tx.update(users).set({ credits: sql`${users.credits} + ${REFERRAL_CREDITS}` }).where(eq(users.id, referrerId))
      }
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
