import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { eq } from 'drizzle-orm'
import { addVerificationToken, dropVerificationToken, retireEarlierTokens, verificationMail, VERIFY_TTL_HOURS } from '../email-verification'
import { asService } from '../../../lib/db/rls'
import { ApiError } from '../../../lib/http/errors'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { users } from '../../../schema'
import { errorFields, log } from '../../../lib/log'

export const route = signedInRoute(limitedRoute(limits.verifyEmailResend, {
  method: 'post',
  path: '/api/auth/verify-email/resend',
  operationId: 'resendVerificationEmail',
  tags: ['Auth'],
  summary: 'Mail a new verification link',
  description:
    "Mails a new link `{base_url}/verify-email?token=<token>` to the signed-in user's current address " +
    `(${VERIFY_TTL_HOURS} hours, single use); earlier links stop working. An already verified address is 409 ` +
    '`Email already verified` (`EMAIL_ALREADY_VERIFIED`): the caller is signed in and can see its own state in ' +
    '`GET /api/user` (`emailVerified`), so the answer reveals nothing. Limited to 3 per hour per user. When the mail ' +
    'cannot be sent the answer is 503 `MAIL_UNAVAILABLE` and the earlier links keep working (the new one is removed).',
  responses: {
    200: ok(z.object({ success: z.literal(true) }).openapi('VerifyEmailResendResponse'), 'A new link was mailed'),
    409: errorResponse('`Email already verified` (`EMAIL_ALREADY_VERIFIED`)'),
    503: errorResponse('`Verification email could not be sent` (`MAIL_UNAVAILABLE`): the mail provider failed; earlier links still work, ask again'),
  },
}))

export const handler: RouteHandler<typeof route> = async (c) => {
  const me = c.var.user
  const { db } = c.var.services
  // Token rows are written as the service: a user's own role may not mint verification tokens. The new link is
  // stored first and earlier ones are retired only once it is mailed: a mail that fails leaves them working.
  const issued = await asService(db, 'emailVerification', async (tx) => {
    const [user] = await tx.select({ id: users.id, email: users.email, verifiedAt: users.emailVerifiedAt }).from(users).where(eq(users.id, me.id))
    if (!user) throw new ApiError('UNAUTHORIZED')
    if (user.verifiedAt) throw new ApiError('EMAIL_ALREADY_VERIFIED')
    return { email: user.email, ...(await addVerificationToken(tx, user)) }
  })
  try {
    await c.var.services.mail.send(verificationMail(issued.email, issued.token, c.var.services.config.baseUrl))
  } catch (e) {
    log.error('mail.verification_failed', { requestId: c.var.requestId, userId: me.id, ...errorFields(e) })
    // Never mailed, the new link is useless: removed (if the database is down too, it only lingers until it expires).
    await asService(db, 'emailVerification', (tx) => dropVerificationToken(tx, issued.tokenHash)).catch((e2) =>
      log.warn('mail.verification_token_not_dropped', { requestId: c.var.requestId, userId: me.id, ...errorFields(e2) }),
    )
    throw new ApiError('MAIL_UNAVAILABLE', 'Verification email could not be sent')
  }
  // Mailed: earlier links stop working. Should this fail, they keep working until they expire (the same address).
  await asService(db, 'emailVerification', (tx) => retireEarlierTokens(tx, me.id, issued.tokenHash)).catch((e) =>
    log.error('mail.verification_earlier_not_retired', { requestId: c.var.requestId, userId: me.id, ...errorFields(e) }),
  )
  return c.json({ success: true as const }, 200)
}
