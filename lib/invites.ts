import { z } from '@hono/zod-openapi'
import { and, eq, isNull, or, sql } from 'drizzle-orm'
import { invites } from '../schema'
import type { Db } from './db/rls'
import { ApiError } from './http/errors'

/** Invite rules shared by the invites family and sign-up (which redeems them). */
export const STATUSES = ['active', 'used', 'expired'] as const
export type InviteStatus = (typeof STATUSES)[number]

/** 64 hex characters (32 random bytes); upper case is accepted and normalised, since codes are stored lower-case. */
export const inviteTokenField = () =>
  z
    .string({ error: 'Invalid invite token' })
    .max(64, 'Invalid invite token')
    .regex(/^[0-9a-fA-F]{64}$/, 'Invalid invite token')
    .transform((t) => t.toLowerCase())
    .openapi({ description: '64 hex characters', example: 'a'.repeat(64) })

/**
 * Status from the database clock, the same clock redemption uses, so the list, verify and sign-up never disagree.
 * The boundary is expired: `expires_at <= now()`.
 */
export const inviteStatus = sql<InviteStatus>`case when ${invites.usedAt} is not null then 'used' when ${invites.expiresAt} is not null and ${invites.expiresAt} <= now() then 'expired' else 'active' end`

/** `inviteStatus` as a predicate: usable right now. */
export const inviteActive = sql`${invites.usedAt} is null and (${invites.expiresAt} is null or ${invites.expiresAt} > now())`


/**
 * Marks the invite used by `userId`, inside the caller's sign-up transaction. The conditional update is the
 * claim: concurrent sign-ups with one token queue on its row lock and all but the first find it used. When
 * nothing is claimed the row is read (a fresh snapshot: READ COMMITTED) only to say why; the caller's
 * transaction then rolls back, taking the new user with it.
 */
export async function redeemInvite(tx: Db, token: string, email: string, userId: string) {
  const [claimed] = await tx
    .update(invites)
    .set({ usedAt: sql`now()`, usedBy: userId })
    .where(and(eq(invites.code, token), inviteActive, or(isNull(invites.email), sql`lower(${invites.email}) = ${email}`)))
    .returning({ code: invites.code })
  if (claimed) return
  const [row] = await tx.select({ email: invites.email, status: inviteStatus }).from(invites).where(eq(invites.code, token))
  if (!row) throw new ApiError('INVALID_INVITE')
  if (row.status === 'used') throw new ApiError('INVITE_USED')
  if (row.status === 'expired') throw new ApiError('INVITE_EXPIRED')
  if (row.email && row.email.toLowerCase() !== email) throw new ApiError('INVITE_EMAIL_MISMATCH')
  // Only an invite committed after the update's snapshot lands here: as good as unknown to this sign-up.
  throw new ApiError('INVALID_INVITE')
}
