import { and, eq, gt, isNull, ne, sql } from 'drizzle-orm'
import { emailVerifications, users } from '../../schema'
import type { Db } from '../../lib/db/rls'
import { asService } from '../../lib/db/rls'
import type { MailMessage } from '../../lib/context'
import { newMailToken } from '../../lib/auth/mail-token'
import { mailboxProven } from '../../lib/auth/mailbox-proof'
import { creditReferral } from './referrals'

export const VERIFY_TTL_HOURS = 24

/**
 * Stores a new verification token for the user's current address, in the caller's transaction (service role).
 * Older unused tokens are voided: only the newest link works. Returns the raw token for the mail.
 */
export async function createVerificationToken(tx: Db, user: { id: string; email: string }) {
  const { token, tokenHash } = await addVerificationToken(tx, user)
  await retireEarlierTokens(tx, user.id, tokenHash)
  return token
}

/**
 * A new verification token for `user`, earlier ones left as they are: for a link that is mailed before they are
 * retired (`retireEarlierTokens`), so a mail that fails leaves the user's earlier link working.
 */
export async function addVerificationToken(tx: Db, user: { id: string; email: string }) {
  const { token, tokenHash } = await newMailToken()
  await tx.insert(emailVerifications).values({
    tokenHash,
    userId: user.id,
    email: user.email,
    // The database clock, the one redemption compares against.
    expiresAt: sql`now() + make_interval(hours => ${VERIFY_TTL_HOURS})`,
  })
  return { token, tokenHash }
}

/** Deletes `userId`'s unused verification tokens but `keepHash`'s: earlier links stop working. */
export const retireEarlierTokens = (tx: Db, userId: string, keepHash: string) =>
  tx.delete(emailVerifications).where(and(eq(emailVerifications.userId, userId), isNull(emailVerifications.usedAt), ne(emailVerifications.tokenHash, keepHash)))

/** Deletes one unused token (a link that was never mailed). */
export const dropVerificationToken = (tx: Db, tokenHash: string) =>
  tx.delete(emailVerifications).where(and(eq(emailVerifications.tokenHash, tokenHash), isNull(emailVerifications.usedAt)))

/** The mail carrying the link `{base_url}/verify-email?token=<token>`. */
export const verificationMail = (to: string, token: string, baseUrl: string): MailMessage => ({
  to,
  kind: 'email-verification',
  subject: 'Confirm your email address',
  text:
    `Please confirm that this is your email address by opening this link within ${VERIFY_TTL_HOURS} hours ` +
    `(it works once):\n${baseUrl}/verify-email?token=${token}\n\nIf you did not create an account, ignore this email.`,
})

/**
 * Redeems a token: single use under concurrency (the conditional update claims it), unexpired, and only for the
 * address it was sent to (after an email change it proves nothing). The mailbox owner proved the address
 * (`mailboxProven`): what the password holder made before ends, except `keepSession` (the session of the browser
 * that opened the link, when it is this account's); the email is marked verified and the user's other tokens
 * void. Credits the referral the verification completes, all in one transaction. False when refused, else the
 * verified user and the sessions that ended (close what they opened with `afterSessionsEnded`).
 */
export async function redeemVerification(db: Db, tokenHash: string, opts: { keepSession?: string } = {}) {
  return asService(db, 'emailVerification', async (tx) => {
    const [claimed] = await tx
      .update(emailVerifications)
      .set({ usedAt: sql`now()` })
      .where(and(eq(emailVerifications.tokenHash, tokenHash), isNull(emailVerifications.usedAt), gt(emailVerifications.expiresAt, sql`now()`)))
      .returning({ userId: emailVerifications.userId, email: emailVerifications.email })
    if (!claimed) return false
    const [user] = await tx
      .select({ id: users.id })
      .from(users)
      .where(and(eq(users.id, claimed.userId), eq(users.email, claimed.email)))
    if (!user) return false
    const proven = await mailboxProven(tx, user.id, 'link', opts)
    if (!proven) return false
    await creditReferral(tx, user.id)
    return { userId: user.id, ended: proven.ended, firstProof: proven.firstProof }
  })
}
