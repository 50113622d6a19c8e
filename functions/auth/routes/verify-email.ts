import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { redeemVerification, VERIFY_TTL_HOURS } from '../../../lib/auth/email-verification'
import { mailTokenHash } from '../../../lib/auth/mail-token'
import { REFERRAL_CREDITS, REFERRAL_DAILY_CAP } from '../../../lib/auth/referrals'
import type { AppEnv } from '../../../lib/context'
import { ApiError } from '../../../lib/http/errors'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { jsonBody } from '../../../lib/http/validation'
import { expireCachedSessions } from '../../../lib/auth/session-cache'

const VerifyEmailBody = z
  .object({ token: z.string({ error: 'Token is required' }).min(1, 'Token is required').max(256, 'Invalid or expired verification token') })
  .openapi('VerifyEmailRequest')

const invalidToken = () => new ApiError(400, 'Invalid or expired verification token', { code: 'INVALID_TOKEN' })

export const route = createRoute(limitedRoute(limits.verifyEmail, {
  method: 'post',
  path: '/api/auth/verify-email',
  operationId: 'verifyEmail',
  security: [],
  tags: ['Auth'],
  summary: 'Verify an email address with the mailed token',
  description:
    'The `token` from the link `{base_url}/verify-email?token=<token>` mailed at sign-up (or by ' +
    '`POST /api/auth/verify-email/resend`). No session needed: the link may be opened in another browser. A token ' +
    `works once (even under concurrent requests), for ${VERIFY_TTL_HOURS} hours, and only for the address it was ` +
    'sent to (after an email change it is refused); only the newest token of a user works. On success the account ' +
    `is verified and, if it signed up with a referral code, both sides get ${REFERRAL_CREDITS} credits, once, unless ` +
    `the referrer already had ${REFERRAL_DAILY_CAP} referrals credited this UTC day (then the referral stays ` +
    'recorded, uncredited). Rate limited per IP: 20 per 15 minutes.',
  request: { body: jsonBody(VerifyEmailBody) },
  responses: {
    200: ok(z.object({ success: z.literal(true) }).openapi('VerifyEmailResponse')),
    400: errorResponse('`Invalid or expired verification token` (`INVALID_TOKEN`: unknown, used, expired or for another address), or a missing token (`VALIDATION`)'),
  },
}))

// Runs before anyone is signed in: the token is looked up by its hash as the service (lib/auth/email-verification.ts).
export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const tokenHash = await mailTokenHash(c.req.valid('json').token)
  const verified = tokenHash ? await redeemVerification(c.var.services.db, tokenHash) : false
  if (!verified) throw invalidToken()
  await expireCachedSessions(c.var.services, verified.userId) // admin rights follow the now-verified email
  return c.json({ success: true as const }, 200)
}
