import { and, eq, isNull } from 'drizzle-orm'
import type { Context } from 'hono'
import { users, type User } from '../../schema'
import type { AppEnv } from '../context'
import { newUserValues } from './accounts'
import { startSession } from './session'
import { errorFields, log } from '../log'

/**
 * Where every sign-in method without a password ends (OAuth, wallet, Farcaster): the user with this
 * email (lower-cased) is linked, or created with a trial; a new user gets the welcome email once; and
 * the same session as email login is started. Race-safe: concurrent first sign-ins create one user.
 */
export async function signInWithIdentity(c: Context<AppEnv>, identity: { email: string; name?: string | null }) {
  const { db } = c.var.services
  const values = newUserValues(identity)
  const [created] = await db.insert(users).values(values).onConflictDoNothing({ target: users.email }).returning()
  const user = created ?? (await db.select().from(users).where(eq(users.email, values.email)))[0]
  if (created) await sendWelcomeOnce(c, created)
  const session = await startSession(c, user.id)
  return { user, created: Boolean(created), expiresAt: session.expiresAt }
}

/** Marks the welcome as sent first (one winner under concurrency), then mails it; a mail failure never fails sign-in. */
export async function sendWelcomeOnce(c: Context<AppEnv>, user: Pick<User, 'id' | 'email' | 'name'>) {
  const { db, mail, config } = c.var.services
  const [claimed] = await db
    .update(users)
    .set({ welcomeSentAt: new Date() })
    .where(and(eq(users.id, user.id), isNull(users.welcomeSentAt)))
    .returning({ id: users.id })
  if (!claimed) return false
  try {
    await mail.send({
      to: user.email,
      kind: 'welcome',
      subject: 'Welcome to the platform',
      text: `Hi ${user.name},\n\nyour account is ready. Your 7-day trial has started: ${config.baseUrl}/dashboard\n`,
    })
  } catch (e) {
    log.error('mail.welcome_failed', { requestId: c.var.requestId, userId: user.id, ...errorFields(e) })
  }
  return true
}
