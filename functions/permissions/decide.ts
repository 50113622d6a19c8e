import { and, eq, gt, type SQL, sql } from 'drizzle-orm'
import { type PermissionRequest, permissionRequests, sessions } from '../../schema'
import { liveSince, statusAt } from './requests'
import type { Db } from '../../lib/db/rls'
import { withUser } from '../../lib/db/rls'

export type Decision = 'approve' | 'deny'

/** The refusals of a decision, worded once for the HTTP route and the socket. */
export const REQUEST_NOT_FOUND = 'Permission request not found'
export const REQUEST_ALREADY_DECIDED = 'Permission request already decided'
export const REQUEST_EXPIRED = 'Permission request expired'
/** A decision on a socket whose session has ended. */
export const SESSION_ENDED = 'Session ended: sign in again'

export const DECISION_STATUS = { approve: 'approved', deny: 'denied' } as const

export type DecideOutcome =
  | { outcome: 'decided'; request: PermissionRequest }
  | { outcome: 'already_decided'; request: PermissionRequest }
  | { outcome: 'expired'; request: PermissionRequest }
  | { outcome: 'not_found' }

/**
 * The owner's decision, applied once: a conditional update of a `pending` row not yet expired at `now`, as the
 * user, so row isolation lets only the owner's rows match. When nothing was updated, a second read tells an
 * expired request (past its 10 minutes, marked or not) and an already decided one from one that does not exist
 * for this user (another user's reads as absent). Used by the HTTP route and by the socket's `decision` message alike.
 */
export function decidePermission(db: Db, userId: string, requestId: string, decision: Decision, now = new Date()): Promise<DecideOutcome> {
  return withUser(db, userId, (tx) => decideIn(tx, userId, requestId, decision, now))
}

/**
 * `decidePermission` for a decision sent on a socket: applied only while the session that opened the socket is
 * a live session of `userId`. The update itself carries that condition, so the decision and the session check
 * see one snapshot: a revocation committed before it refuses the decision, one committed after comes after it.
 */
export function decideAsSession(
  db: Db,
  userId: string,
  sessionHash: string,
  requestId: string,
  decision: Decision,
  now = new Date(),
): Promise<DecideOutcome | { outcome: 'session_ended' }> {
  const theSession = and(eq(sessions.tokenHash, sessionHash), eq(sessions.userId, userId), gt(sessions.expiresAt, sql`now()`))
  const live = sql`exists (${db.select({ one: sql`1` }).from(sessions).where(theSession)})`
  return withUser(db, userId, async (tx) => {
    const done = await decideIn(tx, userId, requestId, decision, now, live)
    if (done.outcome === 'decided') return done
    // Not applied: when the session has ended, that is all the socket is told.
    const [still] = await tx.select({ tokenHash: sessions.tokenHash }).from(sessions).where(theSession)
    return still ? done : { outcome: 'session_ended' as const }
  })
}

async function decideIn(tx: Db, userId: string, requestId: string, decision: Decision, now: Date, guard?: SQL): Promise<DecideOutcome> {
  const mine = and(eq(permissionRequests.id, requestId), eq(permissionRequests.userId, userId))
  const [decided] = await tx
    .update(permissionRequests)
    .set({ status: DECISION_STATUS[decision], decidedAt: now })
    .where(and(mine, eq(permissionRequests.status, 'pending'), gt(permissionRequests.createdAt, liveSince(now)), guard))
    .returning()
  if (decided) return { outcome: 'decided', request: decided }
  const [existing] = await tx.select().from(permissionRequests).where(mine).limit(1)
  if (!existing) return { outcome: 'not_found' }
  return statusAt(existing, now) === 'expired' ? { outcome: 'expired', request: existing } : { outcome: 'already_decided', request: existing }
}
