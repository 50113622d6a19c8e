import type { z } from '@hono/zod-openapi'
import { inviteStatus, type InviteStatus } from '../../lib/invites'
import { invites } from '../../schema'
import type { InviteItemSchema } from './schemas'

/** The plan an invite leads to: headliner invites to the headliner plan, every other audience to solo. */
export const planFor = (audience: string): 'headliner' | 'solo' => (audience === 'headliner' ? 'headliner' : 'solo')

/** `{base_url}/invite?token=…`, with `&name=` only when the invite names its invitee. */
export const inviteUrl = (baseUrl: string, token: string, name?: string | null) =>
  `${baseUrl}/invite?token=${token}${name ? `&name=${encodeURIComponent(name)}` : ''}`

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
