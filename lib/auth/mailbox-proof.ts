import { and, desc, eq, gt, isNull, lt, sql } from 'drizzle-orm'
import { apiKeys, emailVerifications, passkeys, sessions, users } from '../../schema'
import type { Db } from '../db/rls'
import { deleteSessions, type EndedSession } from './session-bound'

/** How the owner of the account's address proved it. */
export type MailboxProof = 'link' | 'reset' | 'provider'

export interface ApiKeyListed {
  name: string
  prefix: string
  lastUsedAt: Date | null
}

export interface MailboxProofOutcome {
  email: string
  /** The address had never been proven before: everything the password holder made until now ended. */
  firstProof: boolean
  /** Sessions deleted: close what they opened with `afterSessionsEnded` once the transaction commits. */
  ended: EndedSession[]
  /** The link was opened without a session of this account: the password set before the proof no longer works. */
  passwordVoided: boolean
  passkeysRemoved: string[]
  keysRevoked: ApiKeyListed[]
  keysKept: ApiKeyListed[]
}

/** `sessionHash` when it is a live session of `userId`, else undefined. */
async function liveSessionOf(tx: Db, userId: string, sessionHash: string) {
  const [row] = await tx
    .select({ tokenHash: sessions.tokenHash })
    .from(sessions)
    .where(and(eq(sessions.tokenHash, sessionHash), eq(sessions.userId, userId), gt(sessions.expiresAt, sql`now()`)))
  return row?.tokenHash
}

const keyColumns = { name: apiKeys.name, prefix: apiKeys.prefix, lastUsedAt: apiKeys.lastUsedAt }

/**
 * The owner of the account's email proved it: the verification link, a password reset, or a provider that vouches
 * for the address taking over an unverified account (lib/auth/sign-in.ts). One rule for all three, in the caller's
 * service-role transaction, with the user row locked: whatever the password holder made before the address was
 * first proven ends, since someone else may have registered the account (pre-account hijacking). Then only what
 * the proven owner makes lasts.
 *
 * - First proof (the address was unverified): every session ends, every API key and every passkey is removed. For
 *   the link, `keepSession` (the session of the browser that opened it) stays when it is a live session of this
 *   account: holding the mailbox's link in the same browser proves the same person, and the password stays too.
 *   A link opened without one proves the mailbox but not the password, which the other party may hold: it stops
 *   working as well (the owner sets one with forgot-password), else the password holder could sign in again and
 *   make new keys after the proof.
 * - A reset (recovery) on an already proven address: every session ends and every passkey is removed; API keys
 *   made after the first proof stay (deployed runtimes keep working), those made before it are revoked.
 * - A link on an already proven address changes nothing.
 * The email is marked verified (the first date is kept) and unused verification links stop working.
 */
export async function mailboxProven(tx: Db, userId: string, proof: MailboxProof, opts: { keepSession?: string } = {}): Promise<MailboxProofOutcome | null> {
  const [user] = await tx.select({ email: users.email, verifiedAt: users.emailVerifiedAt }).from(users).where(eq(users.id, userId)).for('update')
  if (!user) return null
  const firstProof = user.verifiedAt === null
  const outcome: MailboxProofOutcome = { email: user.email, firstProof, ended: [], passwordVoided: false, passkeysRemoved: [], keysRevoked: [], keysKept: [] }
  if (firstProof) {
    await tx.update(users).set({ emailVerifiedAt: sql`now()`, updatedAt: new Date() }).where(eq(users.id, userId))
  }
  await tx.delete(emailVerifications).where(and(eq(emailVerifications.userId, userId), isNull(emailVerifications.usedAt)))
  if (!firstProof && proof === 'link') return outcome

  const keep = firstProof && proof === 'link' && opts.keepSession ? await liveSessionOf(tx, userId, opts.keepSession) : undefined
  if (firstProof && proof === 'link' && !keep) {
    await tx.update(users).set({ passwordHash: null }).where(eq(users.id, userId))
    outcome.passwordVoided = true
  }
  outcome.ended = await deleteSessions(tx, { userIds: [userId], keep })
  outcome.passkeysRemoved = (await tx.delete(passkeys).where(eq(passkeys.userId, userId)).returning({ label: passkeys.label })).map((p) => p.label)
  const madeBeforeProof = firstProof ? eq(apiKeys.userId, userId) : and(eq(apiKeys.userId, userId), lt(apiKeys.createdAt, user.verifiedAt!))
  outcome.keysRevoked = await tx.delete(apiKeys).where(madeBeforeProof).returning(keyColumns)
  if (!firstProof) outcome.keysKept = await tx.select(keyColumns).from(apiKeys).where(eq(apiKeys.userId, userId)).orderBy(desc(apiKeys.createdAt))
  return outcome
}
