import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { randomHex } from '../../../lib/crypto'
import { asService } from '../../../lib/db/rls'
import { emailField } from '../../../lib/http/fields'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { jsonBody } from '../../../lib/http/validation'
import { invites } from '../../../schema'
import { inviteUrl, itemColumns, toItem } from '../invite'
import { AUDIENCES, InviteItemSchema } from '../schemas'

const AdminCreateBody = z
  .object(
    {
      email: emailField().transform((e) => e.toLowerCase()),
      audience: z.enum(AUDIENCES, { error: 'Invalid audience' }).default('headliner'),
      expiresAt: z
        .iso.datetime({ offset: true, error: 'Invalid expiresAt: expected an ISO 8601 date-time' })
        .max(64, 'Invalid expiresAt: expected an ISO 8601 date-time')
        .transform((s) => new Date(s))
        .refine((d) => d.getTime() > Date.now(), 'expiresAt must be in the future')
        .optional()
        .openapi({ description: 'ISO 8601 date-time with `Z` or an offset; must be in the future. Omit for no expiry.' }),
    },
    { error: 'Request body must be a JSON object' },
  )
  .openapi('AdminCreateInvite')

const AdminCreatedSchema = z
  .object({
    success: z.literal(true),
    invite: InviteItemSchema,
    code: z.string().max(1024),
    email: z.string().max(254),
    audience: z.enum(AUDIENCES),
    inviteUrl: z.string().max(2048).openapi({ description: '`{base_url}/invite?token=<code>` (no `&name=`: admin invites carry an email, not a name)' }),
  })
  .openapi('AdminCreatedInvite')

export const route = signedInRoute({
  method: 'post',
  path: '/api/admin/invites',
  operationId: 'createAdminInvite',
  tags: ['Invites'],
  summary: 'Invite an email',
  description: 'Only that email can sign up with the code (case-insensitive). The email is stored lower-cased; the admin is recorded as creator.',
  request: { body: jsonBody(AdminCreateBody) },
  responses: {
    201: ok(AdminCreatedSchema, 'Created'),
    400: errorResponse('Missing or invalid email, unknown audience, malformed or past `expiresAt` (`VALIDATION`); or invalid JSON'),
    403: errorResponse('Not an admin (`ADMIN_REQUIRED`) or foreign `Origin` (`ORIGIN_NOT_ALLOWED`)'),
  },
}, 'admin')

export const handler: RouteHandler<typeof route> = async (c) => {
  const { email, audience, expiresAt } = c.req.valid('json')
  const code = randomHex(32)
  const [row] = await asService(c.var.services.db, 'invites', (tx) =>
    tx.insert(invites).values({ code, email, audience, expiresAt, createdBy: c.var.user.id }).returning(itemColumns),
  )
  return c.json(
    { success: true as const, invite: toItem(row), code, email, audience, inviteUrl: inviteUrl(c.var.services.config.baseUrl, code) },
    201,
  )
}
