import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { eq } from 'drizzle-orm'
import type { AppEnv } from '../../../lib/context'
import { noStore } from '../../../lib/http/no-store'
import { asService } from '../../../lib/db/rls'
import { ApiError } from '../../../lib/http/errors'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { jsonBody } from '../../../lib/http/validation'
import { invites } from '../../../schema'
import { inviteStatus } from '../../../lib/invites'
import { planFor } from '../invite'
import { inviteTokenField } from '../schemas'

const VerifyBody = z.object({ token: inviteTokenField() }, { error: 'Invalid invite token' }).openapi('VerifyInvite')

const VerifiedSchema = z
  .object({
    valid: z.literal(true),
    plan: z.enum(['headliner', 'solo']).openapi({ description: '`headliner` for headliner invites, else `solo`' }),
    audience: z.string().max(1024),
    email: z.string().max(254).nullable().openapi({ description: 'Who the invite is for; null when it names no email' }),
  })
  .openapi('VerifiedInvite')

export const route = createRoute({
  method: 'post',
  path: '/api/invites/verify',
  operationId: 'verifyInvite',
  security: [],
  middleware: [noStore] as const,
  tags: ['Invites'],
  summary: 'Check an invite token',
  description: 'No authentication. Always checked against the stored invite, so `note` (token format alone) is never sent.',
  request: { body: jsonBody(VerifyBody) },
  responses: {
    200: ok(VerifiedSchema, 'The invite can be redeemed'),
    400: errorResponse('`Invalid invite token`: not 64 hex characters (`VALIDATION`); or invalid JSON'),
    404: errorResponse('`Invite not found`'),
    410: errorResponse('`Invite already used` or `Invite expired`'),
  },
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { token } = c.req.valid('json')
  // As the service: the token is the capability, not the caller's identity.
  const [row] = await asService(c.var.services.db, 'invites', (tx) =>
    tx.select({ audience: invites.audience, email: invites.email, status: inviteStatus }).from(invites).where(eq(invites.code, token)),
  )
  if (!row) throw new ApiError('NOT_FOUND', 'Invite not found')
  if (row.status === 'used') throw new ApiError('INVITE_USED')
  if (row.status === 'expired') throw new ApiError('INVITE_EXPIRED')
  return c.json({ valid: true as const, plan: planFor(row.audience), audience: row.audience, email: row.email }, 200)
}
