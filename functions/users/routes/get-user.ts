import type { RouteHandler } from '@hono/zod-openapi'
import { eq } from 'drizzle-orm'
import { ensureReferralCode } from '../../../lib/auth/accounts'
import { readAsUser } from '../../../lib/db/rls'
import { ApiError } from '../../../lib/http/errors'
import { ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { users } from '../../../schema'
import { UserSchema } from '../schemas'
import { toUserView, userColumns } from '../view'

export const route = signedInRoute({
  method: 'get',
  path: '/api/user',
  operationId: 'getUser',
  tags: ['Users'],
  summary: 'Current user',
  description:
    'The signed-in user: profile, plan (the plan both validate-key routes show for the same user: `solo` until one ' +
    'is bought), subscription status, credits, whether the email is verified (`emailVerified`), ' +
    'the user\'s own `referralCode` (an account created without one gets one here), and whether they are an admin ' +
    '(a verified email in `ADMIN_EMAILS`).',
  responses: {
    200: ok(UserSchema),
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const me = c.var.user
  const [row] = await readAsUser(c, (tx) => tx.select(userColumns).from(users).where(eq(users.id, me.id)))
  // Deleted between reading the session and now: the session is as good as gone.
  if (!row) throw new ApiError('UNAUTHORIZED')
  return c.json(toUserView(row, me.isAdmin, await ensureReferralCode(c.var.services.db, me.id, row.referralCode)), 200)
}
