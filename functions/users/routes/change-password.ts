import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { and, eq, isNull } from 'drizzle-orm'
import { getCookie } from 'hono/cookie'
import { hashSecret, verifySecretOrDecoy } from '../../../lib/auth/password'
import { hashSessionToken, requireSession, SESSION_COOKIE } from '../../../lib/auth/session'
import { asService, asUser } from '../../../lib/db/rls'
import { ApiError } from '../../../lib/http/errors'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { jsonBody } from '../../../lib/http/validation'
import { passwordResets, users } from '../../../schema'
import { newPasswordField } from '../../../lib/http/fields'
import { OkSchema } from '../schemas'
import { afterSessionsEnded, deleteSessions } from '../../../lib/auth/session-bound'

const ChangePasswordBody = z
  .object({
    currentPassword: z.string({ error: 'Current password is required' }).max(1024).min(1, 'Current password is required'),
    newPassword: newPasswordField('New password'),
  })
  .openapi('ChangePasswordRequest')

// 400, not 401: a 401 would read as a lost session to the dashboard.
const incorrect = () => new ApiError('CURRENT_PASSWORD_INCORRECT')

export const route = signedInRoute(limitedRoute(limits.passwordChange, {
  method: 'post',
  path: '/api/user/password',
  operationId: 'changePassword',
  tags: ['Users'],
  summary: 'Change password',
  description:
    'Checks `currentPassword`, sets `newPassword` (8 to 256 characters), signs out every other session of the ' +
    'user (their permission sockets and log streams close) and voids unused reset links; the session making the request stays signed in. An account without a ' +
    'password (wallet or OAuth sign-in) answers like a wrong one: set one through forgot-password. Passkeys and ' +
    'API keys stay: the caller proved the current password, a change is routine, and every passkey added was ' +
    'mailed to the owner and can be listed and removed (`/api/passkeys`); recovery from a lost account is ' +
    'forgot/reset-password, which removes every passkey. ' +
    'Limited to 5 attempts per 15 minutes per user, so a stolen session cannot guess the password.',
  request: { body: jsonBody(ChangePasswordBody) },
  responses: {
    200: ok(OkSchema),
    400: errorResponse('`Current password is incorrect`, or a missing or invalid field (`VALIDATION`)'),
  },
}))

export const handler: RouteHandler<typeof route> = async (c) => {
  const me = c.var.user
  const body = c.req.valid('json')
  const cost = c.var.services.config.PASSWORD_HASH_COST
  const [row] = await asUser(c, (tx) => tx.select({ passwordHash: users.passwordHash }).from(users).where(eq(users.id, me.id)))
  const oldHash = row?.passwordHash
  // bcrypt runs outside any transaction: no connection or row lock is held for its ~100 ms.
  if (!(await verifySecretOrDecoy(body.currentPassword, oldHash, cost)) || !oldHash) throw incorrect()
  const passwordHash = await hashSecret(body.newPassword, cost)
  // requireSession read this cookie, so it is present; its hash names the session to keep.
  const keep = await hashSessionToken(getCookie(c, SESSION_COOKIE)!)
  const changed = await asUser(c, async (tx) => {
    // Only if nobody changed the password since it was checked (a concurrent change or reset wins).
    const updated = await tx
      .update(users)
      .set({ passwordHash, updatedAt: new Date() })
      .where(and(eq(users.id, me.id), eq(users.passwordHash, oldHash)))
      .returning({ id: users.id })
    if (updated.length === 0) return null
    return deleteSessions(tx, { userIds: [me.id], keep })
  })
  if (!changed) throw incorrect()
  // The other devices' very next request reads the database; their sockets and log streams close now.
  await afterSessionsEnded(c, changed, [me.id])
  // Reset tokens are the service's (app_user cannot see them): a pending one must not undo this change.
  await asService(c.var.services.db, 'passwordReset', (tx) =>
    tx.delete(passwordResets).where(and(eq(passwordResets.userId, me.id), isNull(passwordResets.usedAt))),
  )
  return c.json({ ok: true as const }, 200)
}
