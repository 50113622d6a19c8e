import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { and, eq, gt, isNull, sql } from 'drizzle-orm'
import { hashSecret } from '../../../lib/auth/password'
import type { AppEnv } from '../../../lib/context'
import { mailTokenHash } from '../../../lib/auth/mail-token'
import { asService } from '../../../lib/db/rls'
import { ApiError } from '../../../lib/http/errors'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { jsonBody } from '../../../lib/http/validation'
import { sendNotice } from '../../../lib/mail/notice'
import { passwordResets, users } from '../../../schema'
import { newPasswordField } from '../../../lib/http/fields'
import { type ResetOutcome, resetDoneMail } from '../reset-notice'
import { OkSchema } from '../schemas'
import { mailboxProven } from '../../../lib/auth/mailbox-proof'
import { afterSessionsEnded } from '../../../lib/auth/session-bound'

const ResetPasswordBody = z
  .object({
    token: z.string({ error: 'Token is required' }).max(8192).min(1, 'Token is required'),
    password: newPasswordField('Password'),
  })
  .openapi('ResetPasswordRequest')

const invalidToken = () => new ApiError('INVALID_RESET_TOKEN')

export const route = createRoute(limitedRoute(limits.passwordReset, {
  method: 'post',
  path: '/api/auth/reset-password',
  operationId: 'resetPassword',
  security: [],
  tags: ['Users'],
  summary: 'Reset password with a mailed token',
  description:
    'Sets `password` (8 to 256 characters) for the account the token was mailed to. A reset is account recovery, ' +
    'so it also: signs out all sessions (sign in again next; their permission sockets and log streams close); ' +
    'removes every passkey (a passkey added by whoever held a session would otherwise outlive the reset); marks the ' +
    'email verified (the token proved the mailbox) and voids unused verification links. API keys: those made ' +
    'before the address was first proven are revoked (an unverified account may have been pre-registered by ' +
    'someone else, who made them): all of them when it was unverified until this reset; those made after it was ' +
    'proven are kept (deployed runtimes keep working). Either ' +
    'way the confirmation mail (`password-reset-done`) says what was removed and lists the keys kept (name, ' +
    'prefix, last use) with where to revoke them. A token works once, even under concurrent requests, and ' +
    "expires after 1 hour; the user's other unused tokens stop working too. An unknown or used token is refused " +
    'before the new password is hashed. Rate limited per IP: 5 per 15 minutes, shared with forgot-password.',
  request: { body: jsonBody(ResetPasswordBody) },
  responses: {
    200: ok(OkSchema),
    400: errorResponse('`Invalid or expired reset token` (unknown, expired or used), or an invalid field (`VALIDATION`)'),
  },
}))

const live = (tokenHash: string) => and(eq(passwordResets.tokenHash, tokenHash), isNull(passwordResets.usedAt), gt(passwordResets.expiresAt, sql`now()`))

// Runs before anyone is signed in: service-role queries for the password reset purpose.
export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const body = c.req.valid('json')
  const { db, config } = c.var.services
  const tokenHash = await mailTokenHash(body.token)
  if (!tokenHash) throw invalidToken() // not one we issue: no query, no hash
  // The cheap refusal before bcrypt: a token that cannot work costs one lookup.
  const [known] = await asService(db, 'passwordReset', (tx) => tx.select({ userId: passwordResets.userId }).from(passwordResets).where(live(tokenHash)))
  if (!known) throw invalidToken()
  // Hashed before the transaction so no row lock is held during bcrypt.
  const passwordHash = await hashSecret(body.password, config.PASSWORD_HASH_COST)
  const outcome = await asService(db, 'passwordReset', async (tx) => {
    // The conditional update is the single-use check: of concurrent requests, one gets the row back.
    const [claimed] = await tx.update(passwordResets).set({ usedAt: sql`now()` }).where(live(tokenHash)).returning({ userId: passwordResets.userId })
    if (!claimed) return null
    const userId = claimed.userId
    await tx.update(users).set({ passwordHash, updatedAt: new Date() }).where(eq(users.id, userId))
    await tx.delete(passwordResets).where(and(eq(passwordResets.userId, userId), isNull(passwordResets.usedAt)))
    // The token proved the mailbox: sessions, passkeys and what was made before the first proof end.
    const proven = await mailboxProven(tx, userId, 'reset')
    if (!proven) return null
    const notice: ResetOutcome = {
      userId,
      email: proven.email,
      passkeysRemoved: proven.passkeysRemoved,
      keys: { firstProof: proven.firstProof, kept: proven.keysKept, revoked: proven.keysRevoked },
    }
    return { notice, ended: proven.ended }
  })
  if (!outcome) throw invalidToken()
  await afterSessionsEnded(c, outcome.ended, [outcome.notice.userId])
  await sendNotice(c, resetDoneMail(outcome.notice, config.baseUrl))
  return c.json({ ok: true as const }, 200)
}
