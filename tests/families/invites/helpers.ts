import { expect } from 'vitest'
import { randomHex } from '../../../lib/crypto'
import { invites } from '../../../schema'
import type { Harness, SeededUser } from '../../support/harness'
import { call } from '../../support/requests'

export const BASE_URL = 'http://localhost:3000' // the harness's first APP_ORIGIN

export interface InviteItem {
  code: string
  email: string | null
  audience: string
  createdAt: string
  usedAt?: string
  expiresAt?: string
  status: 'active' | 'used' | 'expired'
}

export async function createInvite(h: Harness, user: SeededUser, name: string) {
  const res = await call(h, 'POST', '/api/invite', { user, body: { name } })
  expect(res.status).toBe(200)
  return (await res.json()) as { success: true; inviteUrl: string; token: string }
}

export async function adminCreate(h: Harness, body: Record<string, unknown>) {
  const res = await call(h, 'POST', '/api/admin/invites', { user: h.users.admin, body })
  expect(res.status).toBe(201)
  return (await res.json()) as { success: true; invite: InviteItem; code: string; email: string; audience: string; inviteUrl: string }
}

export async function listInvites(h: Harness) {
  const res = await call(h, 'GET', '/api/admin/invites', { user: h.users.admin })
  expect(res.status).toBe(200)
  return (await res.json()) as { invites: InviteItem[]; total: number; active: number }
}

export const verify = (h: Harness, token: unknown) => call(h, 'POST', '/api/invites/verify', { body: { token } })

export const newCode = () => randomHex(32)

/** A row written straight to the database (as the service), for states the API cannot reach on demand. */
export async function insertInvite(h: Harness, values: Partial<typeof invites.$inferInsert> = {}) {
  const [row] = await h.db.insert(invites).values({ code: newCode(), ...values }).returning()
  return row
}
