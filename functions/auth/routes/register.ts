import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { eq } from 'drizzle-orm'
import { isDerivedEmail, isUniqueViolation, newUserValues } from '../../../lib/auth/accounts'
import { rejectScriptedAgents, verifyTurnstile } from '../bot'
import { createVerificationToken, verificationMail, VERIFY_TTL_HOURS } from '../email-verification'
import { hashSecret } from '../../../lib/auth/password'
import { REFERRAL_CREDITS, REFERRAL_DAILY_CAP } from '../referrals'
import type { AppEnv } from '../../../lib/context'
import type { Db } from '../../../lib/db/rls'
import { asService } from '../../../lib/db/rls'
import { ApiError } from '../../../lib/http/errors'
import { emailField, newPasswordField } from '../../../lib/http/fields'
import { errorResponse } from '../../../lib/http/openapi'
import { limits } from '../../../lib/http/limits'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { jsonBody } from '../../../lib/http/validation'
import { inviteTokenField, redeemInvite } from '../../../lib/invites'
import { referrals, users } from '../../../schema'
import { sendNotice } from '../../../lib/mail/notice'

export { REFERRAL_CREDITS }

const RegisterBody = z
  .object({
    email: emailField(),
    password: newPasswordField(),
    name: z.string().trim().max(100, 'Name must be at most 100 characters').optional(),
    referralCode: z
      .string({ error: 'Invalid referral code' }).max(1024)
      .regex(/^[A-Za-z0-9-]{1,20}$/, 'Invalid referral code')
      .optional(),
    token: inviteTokenField().optional().openapi({ description: 'An invite token (64 hex) to redeem with this sign-up' }),
    'cf-turnstile-response': z.string().max(2048).optional(),
  })
  .openapi('RegisterRequest', { example: { email: 'new-user@example.com', password: 'correct horse battery staple', name: 'New User' } })

/** What a browser sends: the docs pages' generated sign-up examples carry it, so they pass the bot check as pasted. */
export const BROWSER_USER_AGENT = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0 Safari/537.36'
const RegisterHeaders = z.object({
  'user-agent': z
    .string()
    .max(1024)
    .optional()
    .openapi({ description: 'A browser’s: an empty or scripted one (curl’s own, `python-requests`, …) is 403 `BOT_DETECTED`', example: BROWSER_USER_AGENT }),
})

export const route = createRoute(limitedRoute(limits.register, {
  method: 'post',
  path: '/api/register',
  operationId: 'registerUser',
  security: [],
  tags: ['Auth'],
  summary: 'Sign up',
  description:
    'Creates the account and starts its 7-day trial; no session is created (sign in next). Emails are stored ' +
    'lower-cased. The email starts unverified: a link `{base_url}/verify-email?token=<64 hex>` is mailed (single ' +
    `use, ${VERIFY_TTL_HOURS} hours; see \`POST /api/auth/verify-email\`). Admin rights and linking other sign-in ` +
    'methods by email wait for it. A referral code (case-insensitive) is recorded now and credits ' +
    `${REFERRAL_CREDITS} credits to both users when the new account verifies its email, once; at most ` +
    `${REFERRAL_DAILY_CAP} referrals per referrer are credited per UTC day (later ones stay recorded, uncredited). ` +
    'Addresses in the wallet and Farcaster derived domains (`@wallet.<SERVICE_DOMAIN>`, ' +
    '`@farcaster.<SERVICE_DOMAIN>`) are refused: 400 `RESERVED_EMAIL_DOMAIN`. Bot detection: an empty or scripted User-Agent is 403; with `TURNSTILE_SECRET_KEY` set, a valid ' +
    'Turnstile token is required. Rate limited per IP (10 per hour). An invite `token` is redeemed in the same ' +
    'transaction (marked used by the new user): an unknown token is 400, a used or expired one 410, and an invite ' +
    'made for an email accepts only that email (case-insensitive), else 403. Any of these creates no user; of ' +
    'concurrent sign-ups with one token exactly one succeeds.',
  middleware: [rejectScriptedAgents],
  request: { headers: RegisterHeaders, body: jsonBody(RegisterBody) },
  responses: {
    201: {
      description: 'Created',
      content: { 'application/json': { schema: z.object({ id: z.string().max(255), email: z.string().max(254), name: z.string().max(256) }) } },
    },
    400: errorResponse(
      'Missing or invalid email, short password, invalid referral code, malformed (`VALIDATION`) or unknown `Invalid invite token`; ' +
        'a wallet or Farcaster derived address (`RESERVED_EMAIL_DOMAIN`)',
    ),
    403: errorResponse('Bot detection (`BOT_DETECTED`); or `Invite is for another email`'),
    409: errorResponse('User already exists'),
    410: errorResponse('`Invite already used` or `Invite expired`'),
  },
}))

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const body = c.req.valid('json')
  const { db, config } = c.var.services
  // Only the provider can prove these addresses; a password account on one would pre-hijack its owner.
  if (isDerivedEmail(config, body.email)) {
    throw new ApiError('RESERVED_EMAIL_DOMAIN')
  }
  await verifyTurnstile(c, body['cf-turnstile-response'])
  const passwordHash = await hashSecret(body.password, config.PASSWORD_HASH_COST)
  const values = newUserValues({ email: body.email, name: body.name, passwordHash })
  const { user, token } = await asService(db, 'signIn', async (tx) => {
    const referrerId = body.referralCode ? await findReferrer(tx, body.referralCode) : null
    const [created] = await tx.insert(users).values(values).returning({ id: users.id, email: users.email, name: users.name })
    // Recorded, not credited: credits wait for the new account's email verification (functions/auth/referrals.ts).
    if (referrerId) await tx.insert(referrals).values({ referrerId, referredId: created.id, credits: REFERRAL_CREDITS })
    // After the insert: a duplicate email is 409 before any invite is claimed; a failed claim rolls the user back.
    if (body.token) await redeemInvite(tx, body.token, values.email, created.id)
    return { user: created, token: await createVerificationToken(tx, created) }
  }).catch((e: unknown) => {
    throw isUniqueViolation(e) ? new ApiError('USER_EXISTS') : e
  })
  // The account exists either way; the user can ask for another link (verify-email/resend).
  await sendNotice(c, verificationMail(user.email, token, c.var.services.config.baseUrl), { userId: user.id })
  return c.json(user, 201)
}

async function findReferrer(tx: Db, code: string) {
  const [referrer] = await tx.select({ id: users.id }).from(users).where(eq(users.referralCode, code.toUpperCase()))
  if (!referrer) throw new ApiError('INVALID_REFERRAL')
  return referrer.id
}
