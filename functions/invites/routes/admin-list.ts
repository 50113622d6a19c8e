import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { desc, sql } from 'drizzle-orm'
import { asService } from '../../../lib/db/rls'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { invites } from '../../../schema'
import { inviteActive } from '../../../lib/invites'
import { itemColumns, toItem } from '../invite'
import { InviteItemSchema } from '../schemas'
import { countField } from '../../../lib/http/fields'

export const LIST_LIMIT = 200

const InviteListSchema = z
  .object({
    invites: z.array(InviteItemSchema).max(LIST_LIMIT),
    total: countField().openapi({ description: 'All invites, not just those returned' }),
    active: countField().openapi({ description: 'Invites neither used nor expired' }),
  })
  .openapi('InviteList')

export const route = signedInRoute({
  method: 'get',
  path: '/api/admin/invites',
  operationId: 'listInvites',
  tags: ['Invites'],
  summary: 'All invites, newest first',
  description: `At most ${LIST_LIMIT} invites; \`total\` and \`active\` count them all. \`usedAt\` and \`expiresAt\` are omitted when unset.`,
  responses: {
    200: ok(InviteListSchema),
    403: errorResponse('Not an admin (`ADMIN_REQUIRED`)'),
  },
}, 'admin')

export const handler: RouteHandler<typeof route> = async (c) => {
  const { db } = c.var.services
  // As the service: the creator policy would show an admin only their own invites.
  // One transaction holds one connection, so the two statements run one after the other.
  const [rows, [counts]] = await asService(db, 'invites', async (tx) => [
    await tx.select(itemColumns).from(invites).orderBy(desc(invites.createdAt), desc(invites.code)).limit(LIST_LIMIT),
    await tx
      .select({
        total: sql<number>`count(*)`.mapWith(Number),
        active: sql<number>`count(*) filter (where ${inviteActive})`.mapWith(Number),
      })
      .from(invites),
  ] as const)
  return c.json({ invites: rows.map(toItem), total: counts.total, active: counts.active }, 200)
}
