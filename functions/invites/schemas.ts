import { z } from '@hono/zod-openapi'
import { STATUSES } from '../../lib/invites'

export { inviteTokenField } from '../../lib/invites'

export const AUDIENCES = ['headliner', 'guest', 'partner'] as const

export const InviteItemSchema = z
  .object({
    code: z.string().max(1024).openapi({ description: 'The invite token (64 hex)' }),
    email: z.string().max(254).nullable().openapi({ description: 'Who the invite is for; null for invites users made by name' }),
    audience: z.string().max(1024).openapi({ example: 'headliner' }),
    createdAt: z.string().max(64).openapi({ format: 'date-time' }),
    usedAt: z.string().max(64).optional().openapi({ format: 'date-time', description: 'Omitted until redeemed' }),
    expiresAt: z.string().max(64).optional().openapi({ format: 'date-time', description: 'Omitted when the invite never expires' }),
    status: z.enum(STATUSES).openapi({ description: '`used` once redeemed; `expired` once `expiresAt` has passed unused; else `active`' }),
  })
  .openapi('Invite')
