import { integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core'
import { ownedBy, serviceAccess } from './rls'

export const users = pgTable(
  'users',
  {
    id: text('id').primaryKey().$defaultFn(() => crypto.randomUUID()),
    // stored lower-cased: sign-in is case-insensitive both ways
    email: text('email').notNull().unique(),
    name: text('name').notNull(),
    passwordHash: text('password_hash'),
    // set when the address is proven: a verification link, or a provider that vouches for it (lib/auth/sign-in.ts)
    emailVerifiedAt: timestamp('email_verified_at', { withTimezone: true }),
    // upper-case; matched case-insensitively at sign-up
    referralCode: text('referral_code').unique(),
    // whole credits (packs, referrals); 1 credit = 100 usage units, spent when the day's allowance is (lib/billing/usage.ts)
    credits: integer('credits').notNull().default(0),
    // units left of the credit already opened (0-99): the balance in units is credits * 100 + credit_units
    creditUnits: integer('credit_units').notNull().default(0),
    trialStartedAt: timestamp('trial_started_at', { withTimezone: true }),
    trialEndsAt: timestamp('trial_ends_at', { withTimezone: true }),
    // null until a paid plan is bought: solo, collective, label, network
    plan: text('plan'),
    subscriptionStatus: text('subscription_status').notNull().default('inactive'),
    subscriptionId: text('subscription_id'),
    // the card processor's customer (Stripe `cus_...`), set by the first completed checkout
    stripeCustomerId: text('stripe_customer_id').unique(),
    // end of the paid period (`nextBilling` of checkout verify); null when unknown or canceled
    subscriptionPeriodEnd: timestamp('subscription_period_end', { withTimezone: true }),
    // the newest payment event applied to plan and status: an older event arriving late changes nothing
    subscriptionEventAt: timestamp('subscription_event_at', { withTimezone: true }),
    // set when the welcome email for an OAuth, wallet or Farcaster sign-up went out: it is sent once
    welcomeSentAt: timestamp('welcome_sent_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [ownedBy('users_self', t.id), serviceAccess('users')],
).enableRLS()

export type User = typeof users.$inferSelect
