import { z } from '@hono/zod-openapi'
import { invites } from '../../schema'
import { inviteStatus, STATUSES, type InviteStatus } from '../../lib/invites'

export { inviteActive, inviteStatus, inviteTokenField } from '../../lib/invites'

export const AUDIENCES = ['headliner', 'guest', 'partner'] as const
/** The plan an invite leads to: headliner invites to the headliner plan, every other audience to solo. */
export const planFor = (audience: string): 'headliner' | 'solo' => (audience === 'headliner' ? 'headliner' : 'solo')

/** `{base_url}/invite?token=…`, with `&name=` only when the invite names its invitee. */
export const inviteUrl = (baseUrl: string, token: string, name?: string | null) =>
  `${baseUrl}/invite?token=${token}${name ? `&name=${encodeURIComponent(name)}` : ''}`

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

export interface InviteRow {
  code: string
  email: string | null
  audience: string
  createdAt: Date
  usedAt: Date | null
  expiresAt: Date | null
  status: InviteStatus
}

export const toItem = (r: InviteRow): z.infer<typeof InviteItemSchema> => ({
  code: r.code,
  email: r.email,
  audience: r.audience,
  createdAt: r.createdAt.toISOString(),
  ...(r.usedAt ? { usedAt: r.usedAt.toISOString() } : {}),
  ...(r.expiresAt ? { expiresAt: r.expiresAt.toISOString() } : {}),
  status: r.status,
})

/** The columns `toItem` needs, for `select` and `returning`. */
export const itemColumns = {
  code: invites.code,
  email: invites.email,
  audience: invites.audience,
  createdAt: invites.createdAt,
  usedAt: invites.usedAt,
  expiresAt: invites.expiresAt,
  status: inviteStatus,
}
