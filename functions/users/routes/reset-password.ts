import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { and, eq, gt, isNull, sql } from 'drizzle-orm'
import { hashSecret } from '../../../lib/auth/password'
import type { AppEnv } from '../../../lib/context'
import { sha256Hex } from '../../../lib/crypto'
import { ApiError } from '../../../lib/http/errors'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { rateLimit } from '../../../lib/http/rate-limit'
import { jsonBody } from '../../../lib/http/validation'
import { passwordResets, sessions, users } from '../../../schema'
import { newPasswordField } from '../../../lib/http/fields'
import { OkSchema } from '../schemas'

const ResetPasswordBody = z
  .object({
    token: z.string({ error: 'Token is required' }).min(1, 'Token is required'),
    password: newPasswordField('Password'),
  })
  .openapi('ResetPasswordRequest')

const invalidToken = () => new ApiError(400, 'Invalid or expired reset token')

export const route = createRoute({
  method: 'post',
  path: '/api/auth/reset-password',
  tags: ['Users'],
  summary: 'Reset password with a mailed token',
  description:
    'Sets `password` (8 to 256 characters) for the account the token was mailed to and signs out all of its ' +
    'sessions (sign in again next). A token works once, even under concurrent requests, and expires after 1 hour; ' +
    'the user\'s other unused tokens stop working too. Rate limited per IP: 5 per 15 minutes, shared with ' +
    'forgot-password.',
  middleware: [rateLimit(limits.passwordReset)] as const,
  request: { body: jsonBody(ResetPasswordBody) },
  responses: {
    200: ok(OkSchema),
    400: errorResponse('`Invalid or expired reset token` (unknown, expired or used), or an invalid field (`VALIDATION`)'),
    429: errorResponse('Too many requests'),
  },
})

// Runs before anyone is signed in: service-role queries on `services.db`, not `asUser`.
export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const body = c.req.valid('json')
  const { db, config } = c.var.services
  if (!/^[0-9a-f]{64}$/i.test(body.token)) throw invalidToken() // not one we issue: no query, no hash
  const tokenHash = await sha256Hex(body.token.toLowerCase())
  // Hashed before the transaction so no row lock is held during bcrypt.
  const passwordHash = await hashSecret(body.password, config.PASSWORD_HASH_COST)
  const reset = await db.transaction(async (tx) => {
    // The conditional update is the single-use check: of concurrent requests, one gets the row back.
    const [claimed] = await tx
      .update(passwordResets)
      .set({ usedAt: sql`now()` })
      .where(and(eq(passwordResets.tokenHash, tokenHash), isNull(passwordResets.usedAt), gt(passwordResets.expiresAt, sql`now()`)))
      .returning({ userId: passwordResets.userId })
    if (!claimed) return false
    await tx.update(users).set({ passwordHash, updatedAt: new Date() }).where(eq(users.id, claimed.userId))
    await tx.delete(sessions).where(eq(sessions.userId, claimed.userId))
    await tx.delete(passwordResets).where(and(eq(passwordResets.userId, claimed.userId), isNull(passwordResets.usedAt)))
    return true
  })
  if (!reset) throw invalidToken()
  return c.json({ ok: true as const }, 200)
}
