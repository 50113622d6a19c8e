import { and, eq } from 'drizzle-orm'
import { type PermissionRequest, permissionRequests } from '../../schema'
import type { Db } from '../db/client'
import { withUser } from '../db/rls'

export type Decision = 'approve' | 'deny'

/** The refusals of a decision, worded once for the HTTP route and the socket. */
export const REQUEST_NOT_FOUND = 'Permission request not found'
export const REQUEST_ALREADY_DECIDED = 'Permission request already decided'

export const DECISION_STATUS = { approve: 'approved', deny: 'denied' } as const

export type DecideOutcome =
  | { outcome: 'decided'; request: PermissionRequest }
  | { outcome: 'already_decided'; request: PermissionRequest }
  | { outcome: 'not_found' }

/**
 * The owner's decision, applied once: a conditional update of a `pending` row, as the user, so row isolation
 * lets only the owner's rows match. When nothing was updated, a second read tells an already decided request
 * from one that does not exist for this user (another user's reads as absent). Used by the HTTP route and by
 * the socket's `decision` message alike.
 */
export function decidePermission(db: Db, userId: string, requestId: string, decision: Decision): Promise<DecideOutcome> {
  return withUser(db, userId, async (tx) => {
    const mine = and(eq(permissionRequests.id, requestId), eq(permissionRequests.userId, userId))
    const [decided] = await tx
      .update(permissionRequests)
      .set({ status: DECISION_STATUS[decision], decidedAt: new Date() })
      .where(and(mine, eq(permissionRequests.status, 'pending')))
      .returning()
    if (decided) return { outcome: 'decided', request: decided }
    const [existing] = await tx.select().from(permissionRequests).where(mine).limit(1)
    return existing ? { outcome: 'already_decided', request: existing } : { outcome: 'not_found' }
  })
}
