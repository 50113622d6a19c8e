import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { eq } from 'drizzle-orm'
import { createVerificationToken, verificationMail, VERIFY_TTL_HOURS } from '../email-verification'
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
    '`GET /api/user` (`emailVerified`), so the answer reveals nothing. Limited to 3 per hour per user.',
  responses: {
    200: ok(z.object({ success: z.literal(true) }).openapi('VerifyEmailResendResponse'), 'A new link was mailed'),
    409: errorResponse('`Email already verified` (`EMAIL_ALREADY_VERIFIED`)'),
    500: errorResponse('`Verification email could not be sent`'),
  },
}))

export const handler: RouteHandler<typeof route> = async (c) => {
  const me = c.var.user
  const { db } = c.var.services
  // Token rows are written as the service: a user's own role may not mint verification tokens.
  const issued = await asService(db, 'emailVerification', async (tx) => {
    const [user] = await tx.select({ id: users.id, email: users.email, verifiedAt: users.emailVerifiedAt }).from(users).where(eq(users.id, me.id))
    if (!user) throw new ApiError('UNAUTHORIZED')
    if (user.verifiedAt) throw new ApiError('EMAIL_ALREADY_VERIFIED')
    return { email: user.email, token: await createVerificationToken(tx, user) }
  })
  try {
    await c.var.services.mail.send(verificationMail(issued.email, issued.token, c.var.services.config.baseUrl))
  } catch (e) {
    log.error('mail.verification_failed', { requestId: c.var.requestId, userId: me.id, ...errorFields(e) })
    throw new ApiError('MAIL_UNAVAILABLE', 'Verification email could not be sent')
  }
  return c.json({ success: true as const }, 200)
}
