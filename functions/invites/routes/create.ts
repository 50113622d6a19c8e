import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { eq } from 'drizzle-orm'
import { randomHex } from '../../../lib/crypto'
import { asService } from '../../../lib/db/rls'
import { ApiError } from '../../../lib/http/errors'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { jsonBody } from '../../../lib/http/validation'
import { invites, users } from '../../../schema'
import { inviteUrl } from '../invite'

/** Audience of invites users make (admins choose theirs); verify answers plan `solo` for it. */
export const USER_INVITE_AUDIENCE = 'guest'

const INVALID = 'Name contains invalid characters'

/**
 * An allow-list, not a block-list: letters (any script) with their marks, digits, spaces, `.`, `-` and an
 * apostrophe (O'Brien, also the typographic ’). That leaves out every character the HTML, script, template
 * and SQL payloads need (`< > " \` { } $ ; : ( ) /`); `--` is refused on top as an SQL comment.
 */
const NAME_CHARS = /^[\p{L}\p{M}\p{N} .'’-]+$/u

export const InviteName = z
  .string({ error: (iss) => (iss.input === undefined ? 'Name is required' : 'Name must be a string') })
  // Before trim, so a trailing newline is refused rather than silently dropped. Refinements rather than
  // `.regex`: the OpenAPI generator would publish a Unicode pattern JSON Schema validators misread.
  .refine((n) => !/\p{Cc}/u.test(n), INVALID)
  .trim()
  .min(1, 'Name is required')
  .max(64, 'Name must be at most 64 characters')
  .refine((n) => NAME_CHARS.test(n) && !n.includes('--') && /[\p{L}\p{N}]/u.test(n), INVALID)
  .openapi({ example: "Siobhán O'Brien", description: '1-64 characters after trimming: letters, digits, spaces, `.`, `-`, apostrophes' })

const CreateInviteBody = z.object({ name: InviteName }, { error: 'Request body must be a JSON object' }).openapi('CreateInvite')

const CreatedInviteSchema = z
  .object({
    success: z.literal(true),
    inviteUrl: z.string().max(2048).openapi({ example: 'https://app.example.com/invite?token=…&name=Siobh%C3%A1n%20O\'Brien' }),
    token: z.string().max(8192).openapi({ description: '64 hex characters from 32 random bytes' }),
  })
  .openapi('CreatedInvite')

export const route = signedInRoute({
  method: 'post',
  path: '/api/invite',
  operationId: 'createInvite',
  tags: ['Invites'],
  summary: 'Invite someone by name',
  description:
    `Saves an invite made by the caller, audience \`${USER_INVITE_AUDIENCE}\` (so verify reports plan \`solo\`), no ` +
    'email and no expiry; `inviteUrl` is `{base_url}/invite?token=<token>&name=<name, URL-encoded>`.',
  request: { body: jsonBody(CreateInviteBody) },
  responses: {
    200: ok(CreatedInviteSchema, 'Saved'),
    400: errorResponse('Name missing, not a string, empty, over 64 characters or with disallowed characters (`VALIDATION`); or invalid JSON'),
    404: errorResponse('User not found'),
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const { name } = c.req.valid('json')
  const me = c.var.user.id
  const token = randomHex(32)
  // As the service: users may not insert invites themselves, or they could pick any audience (plan).
  await asService(c.var.services.db, 'userInvites', async (tx) => {
    const [owner] = await tx.select({ id: users.id }).from(users).where(eq(users.id, me))
    if (!owner) throw new ApiError('USER_NOT_FOUND')
    await tx.insert(invites).values({ code: token, name, audience: USER_INVITE_AUDIENCE, createdBy: me })
  })
  return c.json({ success: true as const, inviteUrl: inviteUrl(c.var.services.config.baseUrl, token, name), token }, 200)
}
