/**
 * Every query that must see across users runs through `asService(db, purpose, fn)` (lib/db/rls.ts) as the
 * role `app_service`, and names one of these purposes. This list is the whole of the app's cross-user access:
 * a new entry is a security decision, reviewed here.
 */
export const CROSS_USER_PURPOSES = {
  sessionLookup: 'Resolve a session cookie: the session by its token hash, with its user',
  sessionLifecycle: 'Start and end sessions at sign-in and sign-out, and remove expired ones',
  apiKeyLookup: 'Resolve an API key by its prefix, then compare its hash',
  signIn: 'Find or create the user at sign-up and sign-in: by email, by (provider, subject), by passkey credential',
  passwordReset: 'Issue and redeem password reset tokens for an email',
  emailVerification: 'Redeem an email verification token, and credit the referral it completes',
  referral: 'Find a referrer by code and record the referral at sign-up',
  invites: 'Verify and redeem invite codes; admin invite lists and admin-made invites',
  riscEvents: "Google RISC events: record them, and end the affected users' sessions and links",
  mailOutbox: 'Write the dev outbox, whoever the mail is for',
  farcasterRefresh: 'Refresh a Farcaster session token: check that the user it names still exists (no session yet)',
  identityLookup: 'The backend resolves a user named by verified identity headers or the shared key',
} as const

export type CrossUserPurpose = keyof typeof CROSS_USER_PURPOSES
