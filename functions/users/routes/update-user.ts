import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { eq } from 'drizzle-orm'
import { ensureReferralCode } from '../../../lib/auth/accounts'
import { asUser } from '../../../lib/db/rls'
import { ApiError } from '../../../lib/http/errors'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { jsonBody } from '../../../lib/http/validation'
import { users } from '../../../schema'
import { UserSchema } from '../schemas'
import { toUserView, userColumns } from '../view'
import { expireCachedSessions } from '../../../lib/auth/session-cache'

// Only `name` is editable; other fields in the body (email, credits, plan...) are ignored.
const UpdateUserBody = z
  .object({
    name: z
      .string({ error: 'Name is required' })
      .trim()
      .min(1, 'Name is required')
      .max(100, 'Name must be at most 100 characters'),
  })
  .openapi('UpdateUserRequest')

const updateRoute = <M extends 'post' | 'patch'>(method: M) =>
  signedInRoute({
    method,
    path: '/api/user',
    operationId: method === 'post' ? 'updateUser' : 'patchUser',
    tags: ['Users'],
    summary: 'Update profile',
    description: 'Sets the display name (trimmed, 1 to 100 characters). `POST` and `PATCH` are the same operation.',
    request: { body: jsonBody(UpdateUserBody) },
    responses: {
      200: ok(UserSchema, 'The updated user'),
      400: errorResponse('Missing, empty or too long `name` (`VALIDATION`)'),
    },
  })

export const route = updateRoute('post')
export const patchRoute = updateRoute('patch')

export const handler: RouteHandler<typeof route> = async (c) => {
  const me = c.var.user
  const { name } = c.req.valid('json')
  const [row] = await asUser(c, (tx) =>
    tx.update(users).set({ name, updatedAt: new Date() }).where(eq(users.id, me.id)).returning(userColumns),
  )
  if (!row) throw new ApiError('UNAUTHORIZED')
  await expireCachedSessions(c.var.services, me.id) // the cached name is stale everywhere
  return c.json(toUserView(row, me.isAdmin, await ensureReferralCode(c.var.services.db, me.id, row.referralCode)), 200)
}
