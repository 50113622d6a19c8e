import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { redeemVerification, VERIFY_TTL_HOURS } from '../email-verification'
import { mailTokenHash } from '../../../lib/auth/mail-token'
import { REFERRAL_CREDITS, REFERRAL_DAILY_CAP } from '../referrals'
import type { AppEnv } from '../../../lib/context'
import { ApiError } from '../../../lib/http/errors'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { jsonBody } from '../../../lib/http/validation'
import { afterSessionsEnded } from '../../../lib/auth/session-bound'
import { getCookie } from 'hono/cookie'
import { hashSessionToken, SESSION_COOKIE } from '../../../lib/auth/session'

const VerifyEmailBody = z
  .object({ token: z.string({ error: 'Token is required' }).min(1, 'Token is required').max(256, 'Invalid or expired verification token') })
  .openapi('VerifyEmailRequest')

const invalidToken = () => new ApiError('INVALID_VERIFICATION_TOKEN')

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
    'recorded, uncredited).\n\n' +
    'The mailbox owner has proven the address on an account someone else may have registered: everything made ' +
    'before this proof ends. Every session of the account is signed out (its permission sockets and log streams ' +
    'close), every API key and every passkey is removed (create them again). One exception: when the request ' +
    'carries a live session of this same account (the link opened in the browser that signed up), that session ' +
    'stays signed in and the password keeps working: holding the mailbox’s link in the same browser proves the ' +
    'same person. A link opened without one proves the mailbox but not the password, which someone else may have ' +
    'set: the password stops working too; sign in by setting a new one with `POST /api/auth/forgot-password`. After ' +
    'that, only what the proven owner makes lasts. A token redeemed on an address already proven changes nothing. ' +
    'Rate limited per IP: 20 per 15 minutes.',
  request: { body: jsonBody(VerifyEmailBody) },
  responses: {
    200: ok(z.object({ success: z.literal(true) }).openapi('VerifyEmailResponse')),
    400: errorResponse('`Invalid or expired verification token` (`INVALID_VERIFICATION_TOKEN`: unknown, used, expired or for another address), or a missing token (`VALIDATION`)'),
  },
}))

// Runs before anyone is signed in: the token is looked up by its hash as the service (functions/auth/email-verification.ts).
export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const tokenHash = await mailTokenHash(c.req.valid('json').token)
  // The session this browser holds, if any: kept when it is a session of the account being verified.
  const cookie = getCookie(c, SESSION_COOKIE)
  const keepSession = cookie && cookie.length <= 256 ? await hashSessionToken(cookie) : undefined
  const verified = tokenHash ? await redeemVerification(c.var.services.db, tokenHash, { keepSession }) : false
  if (!verified) throw invalidToken()
  // Admin rights follow the now-verified email; the squatter's sessions, sockets and streams end now.
  await afterSessionsEnded(c, verified.ended, [verified.userId])
  return c.json({ success: true as const }, 200)
}
