export const TRIAL_DAYS = 7
const DAY_MS = 24 * 60 * 60 * 1000

/** Upper-case, 10 characters; matched case-insensitively at sign-up. */
export const newReferralCode = () => crypto.randomUUID().replace(/-/g, '').slice(0, 10).toUpperCase()

/** The columns every new account starts with, however it signs up: lower-cased email, a referral code, the trial. */
export function newUserValues(input: { email: string; name?: string | null; passwordHash?: string | null }, now = new Date()) {
  const email = input.email.toLowerCase()
  return {
    email,
    name: input.name?.trim() || email,
    passwordHash: input.passwordHash ?? null,
    referralCode: newReferralCode(),
    trialStartedAt: now,
    trialEndsAt: new Date(now.getTime() + TRIAL_DAYS * DAY_MS),
  }
}
