import { and, eq, isNull, ne, or } from 'drizzle-orm'
import type { Context } from 'hono'
import { accounts, passwordResets, users, type User } from '../../schema'
import type { AppEnv } from '../context'
import type { Db } from '../db/rls'
import { asService } from '../db/rls'
import { ApiError } from '../http/errors'
import { newUserValues } from './accounts'
import { startSession } from './session'
import { log } from '../log'
import { sendNotice } from '../mail/notice'
import { mailboxProven } from './mailbox-proof'
import { afterSessionsEnded, type EndedSession } from './session-bound'

export type Provider = 'google' | 'wallet' | 'farcaster'

/** What a provider proved: its subject, and an email it may or may not vouch for. */
export interface ProviderIdentity {
  provider: Provider
  /** The provider's stable id: Google `sub`, the lower-case wallet address, the Farcaster fid. */
  subject: string
  email: string
  /** The provider vouches the address is the subject's (Google `email_verified`; derived wallet/Farcaster addresses). */
  emailVerified: boolean
  name?: string | null
  /** Provider tokens kept on the link (Google), written only when the link is first made. */
  tokens?: { accessToken: string | null; refreshToken: string | null; expiresAt: Date | null; scope: string | null }
}

/** Refusals a caller may map to its own answer (the Google callback turns them into `/login?error=`). */

/**
 * Where every sign-in method without a password ends (Google, wallet, Farcaster). The account rules, against
 * pre-account hijacking (Sudhodanan & Paverd, 2022) and provider identity confusion:
 * 1. A linked (provider, subject) signs in the user it is linked to, whatever email it now carries.
 * 2. Else by email: an unknown email creates the user (verified when the provider vouches) with the trial and,
 *    once, the welcome email.
 * 3. An existing account is linked only when the provider vouches for the email; else 409 `ACCOUNT_LINK_REFUSED`.
 * 4. If that existing account's email is unverified and it has a password, whoever set the account up never
 *    proved the address: the provider's owner takes it over, and everything the other party could have left
 *    behind is removed (password, sessions, API keys, passkeys, other provider links, unused verification and
 *    reset tokens) before it is marked verified. A password-less unverified account was made by a provider
 *    sign-in before verification was recorded: it is simply marked verified.
 * The lookup and every write are one service-role transaction with the user row locked, so concurrent first
 * sign-ins create one user and a takeover cannot interleave with a sign-in. Then a new session is started.
 */
export async function signInWithIdentity(c: Context<AppEnv>, identity: ProviderIdentity) {
  const { db } = c.var.services
  const result = await asService(db, 'signIn', (tx) => resolveAccount(c, tx, identity))
  if (result.tookOver) {
    log.warn('auth.unverified_account_taken_over', { requestId: c.var.requestId, provider: identity.provider, userId: result.user.id })
  }
  // Marking the email verified (and any takeover) changes what a cached session of this user says; a takeover
  // ended the other party's sessions: what they opened (sockets, log streams) closes too.
  const stale = !result.created && !result.user.emailVerifiedAt ? [result.user.id] : []
  await afterSessionsEnded(c, result.ended, stale)
  if (result.created) await sendWelcomeOnce(c, result.user)
  const session = await startSession(c, result.user.id)
  return { ...result, expiresAt: session.expiresAt }
}

async function resolveAccount(c: Context<AppEnv>, tx: Db, identity: ProviderIdentity) {
  const email = identity.email.toLowerCase()
  const [link] = await tx
    .select({ userId: accounts.userId, signInDisabled: accounts.signInDisabled })
    .from(accounts)
    .where(and(eq(accounts.provider, identity.provider), eq(accounts.providerAccountId, identity.subject)))
  if (link?.signInDisabled) throw new ApiError('ACCOUNT_DISABLED')
  if (link) {
    const [user] = await tx.select().from(users).where(eq(users.id, link.userId)).for('update')
    // The linked user's address is vouched for again: same rule as a first link.
    const vouched = identity.emailVerified && user.email === email && !user.emailVerifiedAt
    const { tookOver, ended } = vouched ? await claimUnverified(tx, user, identity) : notTaken
    return { user: tookOver ? { ...user, name: identity.name?.trim() || user.name } : user, created: false, tookOver, ended }
  }

  const values = newUserValues({ email, name: identity.name, emailVerified: identity.emailVerified })
  const [created] = await tx.insert(users).values(values).onConflictDoNothing({ target: users.email }).returning()
  if (created) {
    await linkSubject(tx, created.id, identity)
    return { user: created, created: true, tookOver: false, ended: [] as EndedSession[] }
  }
  const [existing] = await tx.select().from(users).where(eq(users.email, email)).for('update')
  if (!identity.emailVerified) {
    throw new ApiError('ACCOUNT_LINK_REFUSED')
  }
  const { tookOver, ended } = existing.emailVerifiedAt ? notTaken : await claimUnverified(tx, existing, identity)
  await linkSubject(tx, existing.id, identity)
  return { user: tookOver ? { ...existing, name: identity.name?.trim() || existing.name } : existing, created: false, tookOver, ended }
}

const notTaken = { tookOver: false, ended: [] as EndedSession[] }

/**
 * Marks `user`'s email verified on the provider's word. With a password or another provider's link, the account
 * was set up by someone who never proved the address: it is cleared first (see `signInWithIdentity` rule 4), by
 * the same rule as a verification link or a reset (`mailboxProven`), plus the password, reset tokens and other
 * links. Answers whether it was, and the sessions that ended.
 */
async function claimUnverified(tx: Db, user: User, identity: ProviderIdentity) {
  const now = new Date()
  const others = or(ne(accounts.provider, identity.provider), ne(accounts.providerAccountId, identity.subject))
  const [foreignLink] = await tx.select({ id: accounts.id }).from(accounts).where(and(eq(accounts.userId, user.id), others)).limit(1)
  if (!user.passwordHash && !foreignLink) {
    await tx.update(users).set({ emailVerifiedAt: now, updatedAt: now }).where(eq(users.id, user.id))
    return notTaken
  }
  await tx
    .update(users)
    .set({ passwordHash: null, name: identity.name?.trim() || user.name, updatedAt: now })
    .where(eq(users.id, user.id))
  // Sessions, API keys, passkeys and unused verification links; the email marked verified.
  const proven = await mailboxProven(tx, user.id, 'provider')
  await tx.delete(passwordResets).where(and(eq(passwordResets.userId, user.id), isNull(passwordResets.usedAt)))
  // Any other provider link is the other party's ("trojan identifier"); this subject's own link stays.
  await tx.delete(accounts).where(and(eq(accounts.userId, user.id), others))
  return { tookOver: true, ended: proven?.ended ?? [] }
}

/** Links the subject once: a later sign-in keeps the first record (and Google's first-consent refresh token). */
async function linkSubject(tx: Db, userId: string, identity: ProviderIdentity) {
  const t = identity.tokens
  await tx
    .insert(accounts)
    .values({
      userId,
      provider: identity.provider,
      providerAccountId: identity.subject,
      email: identity.email.toLowerCase(),
      accessToken: t?.accessToken ?? null,
      refreshToken: t?.refreshToken ?? null,
      expiresAt: t?.expiresAt ?? null,
      scope: t?.scope ?? null,
    })
    .onConflictDoNothing({ target: [accounts.provider, accounts.providerAccountId] })
}

/** Marks the welcome as sent first (one winner under concurrency), then mails it; a mail failure never fails sign-in. */
export async function sendWelcomeOnce(c: Context<AppEnv>, user: Pick<User, 'id' | 'email' | 'name'>) {
  const { db, config } = c.var.services
  const [claimed] = await asService(db, 'signIn', (tx) =>
    tx
      .update(users)
      .set({ welcomeSentAt: new Date() })
      .where(and(eq(users.id, user.id), isNull(users.welcomeSentAt)))
      .returning({ id: users.id }),
  )
  if (!claimed) return false
  const welcome = {
    to: user.email,
    kind: 'welcome',
    subject: 'Welcome to the platform',
    text: `Hi ${user.name},\n\nyour account is ready. Your 7-day trial has started: ${config.baseUrl}/dashboard\n`,
  }
  await sendNotice(c, welcome, { userId: user.id })
  return true
}
