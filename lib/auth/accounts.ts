import { and, eq, isNull } from 'drizzle-orm'
import { users } from '../../schema'
import type { Config } from '../config'
import type { Db } from '../db/rls'
import { asService } from '../db/rls'
import { sqlState } from '../log'

export const TRIAL_DAYS = 7
const DAY_MS = 24 * 60 * 60 * 1000

/** Upper-case, 10 characters; matched case-insensitively at sign-up. */
export const newReferralCode = () => crypto.randomUUID().replace(/-/g, '').slice(0, 10).toUpperCase()

/** The columns every new account starts with, however it signs up: lower-cased email, a referral code, the trial. */
export function newUserValues(
  input: { email: string; name?: string | null; passwordHash?: string | null; emailVerified?: boolean },
  now = new Date(),
) {
  const email = input.email.toLowerCase()
  return {
    email,
    name: input.name?.trim() || email,
    passwordHash: input.passwordHash ?? null,
    emailVerifiedAt: input.emailVerified ? now : null,
    referralCode: newReferralCode(),
    trialStartedAt: now,
    trialEndsAt: new Date(now.getTime() + TRIAL_DAYS * DAY_MS),
  }
}

/** Wallet users' address: `<address lower-case>@wallet.<SERVICE_DOMAIN>`, proven by the signature. */
export const walletEmail = (config: Pick<Config, 'serviceDomain'>, address: string) =>
  `${address.toLowerCase()}@wallet.${config.serviceDomain}`

/** Farcaster users' address: `<fid>@farcaster.<SERVICE_DOMAIN>`, proven by the ID token. */
export const farcasterEmail = (config: Pick<Config, 'serviceDomain'>, fid: number | string) => `${fid}@farcaster.${config.serviceDomain}`

/**
 * The derived domains belong to wallet and Farcaster sign-in: nobody can receive mail there, so an address in
 * them is only ever proven by its provider, and password sign-up must not claim one.
 */
export function isDerivedEmail(config: Pick<Config, 'serviceDomain'>, email: string) {
  const domain = email.toLowerCase().split('@').pop() ?? ''
  return domain === `wallet.${config.serviceDomain}` || domain === `farcaster.${config.serviceDomain}`
}

/**
 * Admin rights: an email listed in `ADMIN_EMAILS` (case-insensitive) that is verified, so an unverified sign-up
 * with an admin's address gets none.
 */
export const isVerifiedAdmin = (config: Pick<Config, 'ADMIN_EMAILS'>, user: { email: string; emailVerifiedAt: Date | null }) =>
  !!user.emailVerifiedAt && config.ADMIN_EMAILS.includes(user.email.toLowerCase())

/** Postgres 23505, as the drivers report it (directly or as a cause). */
export const isUniqueViolation = (e: unknown) => sqlState(e) === '23505'

/**
 * The user's referral code, giving one to an account created before every sign-up got one. Set only where it is
 * still null (concurrent readers agree on the first); a clash with another user's code draws again.
 */
export async function ensureReferralCode(db: Db, userId: string, current: string | null): Promise<string> {
  if (current) return current
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      return await asService(db, 'referral', async (tx) => {
        const [set] = await tx
          .update(users)
          .set({ referralCode: newReferralCode() })
          .where(and(eq(users.id, userId), isNull(users.referralCode)))
          .returning({ code: users.referralCode })
        if (set?.code) return set.code
        const [row] = await tx.select({ code: users.referralCode }).from(users).where(eq(users.id, userId))
        if (!row?.code) throw new Error(`user ${userId} not found`)
        return row.code
      })
    } catch (e) {
      if (!isUniqueViolation(e)) throw e
    }
  }
  throw new Error('could not draw a free referral code')
}
