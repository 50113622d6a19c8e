import { and, eq, gt, isNull, sql } from 'drizzle-orm'
import { emailVerifications, users } from '../../schema'
import type { Db } from '../db/client'
import { asService } from '../db/rls'
import type { MailMessage } from '../mail/types'
import { newMailToken } from './mail-token'
import { creditReferral } from './referrals'

export const VERIFY_TTL_HOURS = 24

/**
 * Stores a new verification token for the user's current address, in the caller's transaction (service role).
 * Older unused tokens are voided: only the newest link works. Returns the raw token for the mail.
 */
export async function createVerificationToken(tx: Db, user: { id: string; email: string }) {
  const { token, tokenHash } = await newMailToken()
  await tx.delete(emailVerifications).where(and(eq(emailVerifications.userId, user.id), isNull(emailVerifications.usedAt)))
  await tx.insert(emailVerifications).values({
    tokenHash,
    userId: user.id,
    email: user.email,
    // The database clock, the one redemption compares against.
    expiresAt: sql`now() + make_interval(hours => ${VERIFY_TTL_HOURS})`,
  })
  return token
}

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
 * address it was sent to (after an email change it proves nothing). Marks the email verified, voids the user's
 * other tokens and credits the referral the verification completes, all in one transaction. False when refused,
 * else the verified user.
 */
export async function redeemVerification(db: Db, tokenHash: string) {
  return asService(db, 'emailVerification', async (tx) => {
    const [claimed] = await tx
      .update(emailVerifications)
      .set({ usedAt: sql`now()` })
      .where(and(eq(emailVerifications.tokenHash, tokenHash), isNull(emailVerifications.usedAt), gt(emailVerifications.expiresAt, sql`now()`)))
      .returning({ userId: emailVerifications.userId, email: emailVerifications.email })
    if (!claimed) return false
    const [user] = await tx
      .update(users)
      .set({ emailVerifiedAt: sql`coalesce(${users.emailVerifiedAt}, now())`, updatedAt: new Date() })
      .where(and(eq(users.id, claimed.userId), eq(users.email, claimed.email)))
      .returning({ id: users.id })
    if (!user) return false
    await tx.delete(emailVerifications).where(and(eq(emailVerifications.userId, user.id), isNull(emailVerifications.usedAt)))
    await creditReferral(tx, user.id)
    return { userId: user.id }
  })
}
