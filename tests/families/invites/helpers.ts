import { expect } from 'vitest'
import { randomHex } from '../../../lib/crypto'
import { invites } from '../../../schema'
import { BROWSER, type Harness, type SeededUser } from '../../support/harness'

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

/** A request as the dashboard sends it: the user's cookie (if any), JSON, and the trusted origin. */
export function call(h: Harness, method: string, path: string, opts: { user?: SeededUser; body?: unknown; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...BROWSER, ...opts.headers }
  if (opts.user) headers.cookie = opts.user.cookie
  const body = opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body)
  return h.web.request(path, { method, headers, body })
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
