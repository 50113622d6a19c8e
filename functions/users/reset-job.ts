import { eq, sql } from 'drizzle-orm'
import type { Context } from 'hono'
import type { AppEnv, MailMessage } from '../../lib/context'
import { isDerivedEmail } from '../../lib/auth/accounts'
import { newMailToken } from '../../lib/auth/mail-token'
import { asService } from '../../lib/db/rls'
import { ApiError } from '../../lib/http/errors'
import { errorFields, log } from '../../lib/log'
import { passwordResets, users } from '../../schema'

/** Where forgot-password hands its work: the reply never waits for the account lookup, the token or the mail. */
export const RESET_QUEUE_PATH = '/api/queue/password-reset'
export const RESET_TTL_MINUTES = 60

export const resetMail = (to: string, link: string): MailMessage => ({
  to,
  kind: 'password-reset',
  subject: 'Reset your password',
  text:
    `Someone asked to reset the password of your account.\n\n` +
    `To choose a new password, open this link within ${RESET_TTL_MINUTES} minutes (it works once):\n${link}\n\n` +
    `If you did not ask for this, ignore this email: your password stays as it is.`,
})

/**
 * The queued half of forgot-password: for an account with a real mailbox, stores a new token (only its
 * SHA-256) and mails the link. A mail failure removes that token and answers 503, so the queue's retry
 * issues a fresh one; no unsent token lingers. Returns whether a mail went out.
 */
export async function sendResetMail(c: Context<AppEnv>, email: string): Promise<boolean> {
  const { db, config, mail } = c.var.services
  // Wallet and Farcaster users' derived addresses have no mailbox behind them.
  if (isDerivedEmail(config, email)) return false
  const { token, tokenHash } = await newMailToken()
  const user = await asService(db, 'passwordReset', async (tx) => {
    const [found] = await tx.select({ id: users.id, email: users.email }).from(users).where(eq(users.email, email)).limit(1)
    if (found) {
      // The database clock, the same one reset-password compares against.
      await tx.insert(passwordResets).values({ tokenHash, userId: found.id, expiresAt: sql`now() + make_interval(mins => ${RESET_TTL_MINUTES})` })
    }
    return found
  })
  if (!user) return false
  try {
    await mail.send(resetMail(user.email, `${config.baseUrl}/reset-password?token=${token}`))
    return true
  } catch (e) {
    await asService(db, 'passwordReset', (tx) => tx.delete(passwordResets).where(eq(passwordResets.tokenHash, tokenHash)))
    // The error never holds the link.
    log.error('mail.password_reset_failed', { requestId: c.var.requestId, ...errorFields(e) })
    throw new ApiError('MAIL_UNAVAILABLE')
  }
}
