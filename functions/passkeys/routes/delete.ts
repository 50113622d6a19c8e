import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { and, eq } from 'drizzle-orm'
import { asUser } from '../../../lib/db/rls'
import { ApiError } from '../../../lib/http/errors'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { passkeys } from '../../../schema'
import { PasskeyIdParams } from '../schemas'

export const route = signedInRoute({
  method: 'delete',
  path: '/api/passkeys/{id}',
  operationId: 'deletePasskey',
  tags: ['Passkeys'],
  summary: 'Remove one of the caller’s passkeys',
  description:
    'The passkey stops signing in at once. Needs only a session (removing a credential grants nothing). ' +
    "Another user's passkey answers exactly like an unknown one (404), so ids reveal nothing.",
  request: { params: PasskeyIdParams },
  responses: {
    200: ok(z.object({ success: z.literal(true), id: z.string().max(1400) }).openapi('PasskeyDeleted')),
    400: errorResponse('An id that is not a credential id (`VALIDATION`)'),
    404: errorResponse('`Passkey not found`: no such passkey, or not the caller’s'),
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const { id } = c.req.valid('param')
  const me = c.var.user.id
  const deleted = await asUser(c, (tx) =>
    tx.delete(passkeys).where(and(eq(passkeys.id, id), eq(passkeys.userId, me))).returning({ id: passkeys.id }),
  )
  if (deleted.length === 0) throw new ApiError('NOT_FOUND', 'Passkey not found')
  return c.json({ success: true as const, id }, 200)
}
