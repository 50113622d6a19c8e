import { eq } from 'drizzle-orm'
import { expect } from 'vitest'
import { users } from '../../../schema'
import type { Harness, SeededUser } from '../../support/harness'
import { call } from '../../support/requests'

export const getBilling = (h: Harness, user?: SeededUser) => call(h, 'GET', '/api/billing', { user })
export const billingAction = (h: Harness, user: SeededUser | undefined, body: unknown) => call(h, 'POST', '/api/billing', { user, body })

export async function billing(h: Harness, user: SeededUser) {
  const res = await getBilling(h, user)
  expect(res.status).toBe(200)
  return (await res.json()) as Record<string, any>
}

export async function action(h: Harness, user: SeededUser, body: unknown, status = 200) {
  const res = await billingAction(h, user, body)
  const json = (await res.json()) as Record<string, any>
  expect(res.status, JSON.stringify(json)).toBe(status)
  return json
}

export const storedUser = async (h: Harness, id: string) => (await h.db.select().from(users).where(eq(users.id, id)))[0]

/** A fresh signed-in user (the per-user billing limit and usage counters stay this test's own). */
export const freshUser = (h: Harness, tag = 'u') => h.seedUser(tag, `${tag}-${crypto.randomUUID().slice(0, 8)}@example.com`)
