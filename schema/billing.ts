import { boolean, index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core'
import { ownedBy, serviceAccess } from './rls'
import { paymentSessions } from './gateway'
import { users } from './users'

/**
 * A user's own AI-provider key (BYOK), sealed with AES-GCM (lib/secret-box.ts): `keyId` names the
 * encryption key so keys can rotate. Only `provider` and the row's existence are ever shown.
 */
export const providerKeys = pgTable(
  'provider_keys',
  {
    userId: text('user_id').primaryKey().references(() => users.id, { onDelete: 'cascade' }),
    provider: text('provider').notNull(),
    keyId: text('key_id').notNull(),
    sealed: text('sealed').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [ownedBy('provider_keys_owner', t.userId), serviceAccess('provider_keys')],
).enableRLS()

/** Credit packs paid for: one row per payment (the Checkout Session id), so a payment grants credits once. */
export const creditPurchases = pgTable(
  'credit_purchases',
  {
    paymentId: text('payment_id').primaryKey(),
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    pack: integer('pack').notNull(),
    credits: integer('credits').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('credit_purchases_user_idx').on(t.userId), ownedBy('credit_purchases_owner', t.userId), serviceAccess('credit_purchases')],
).enableRLS()

/**
 * Card top-ups of a wallet's prepaid gateway balance (`GET /api/wallet/top-up`): one row per paid Checkout Session
 * (`paymentId`), written in the transaction that adds its amount to the wallet's card-funded payment session, so a
 * payment funds once. The user who paid reads their own; `walletAddress` lower case, `amountCents` USD cents.
 */
export const walletTopUps = pgTable(
  'wallet_top_ups',
  {
    paymentId: text('payment_id').primaryKey(),
    userId: text('user_id').references(() => users.id, { onDelete: 'set null' }),
    walletAddress: text('wallet_address').notNull(),
    amountCents: integer('amount_cents').notNull(),
    sessionId: text('session_id')
      .notNull()
      .references(() => paymentSessions.id, { onDelete: 'cascade' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('wallet_top_ups_user_idx').on(t.userId, t.createdAt), ownedBy('wallet_top_ups_owner', t.userId), serviceAccess('wallet_top_ups')],
).enableRLS()

/** Every Stripe event applied, inserted in the same transaction as its effect: a redelivery changes nothing. */
export const stripeEvents = pgTable(
  'stripe_events',
  {
    id: text('id').primaryKey(),
    type: text('type').notNull(),
    // the event's own `created` (Stripe's clock)
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    processedAt: timestamp('processed_at', { withTimezone: true }).notNull().defaultNow(),
    outcome: text('outcome').notNull(),
  },
  () => [serviceAccess('stripe_events')],
).enableRLS()

/** Subscription deploys the backend accepted, keyed by subscription (or customer): a retried call repeats nothing. */
export const subscriptionDeployments = pgTable(
  'subscription_deployments',
  {
    deployKey: text('deploy_key').primaryKey(),
    customerId: text('customer_id').notNull(),
    subscriptionId: text('subscription_id'),
    tier: text('tier').notNull(),
    memoryGb: integer('memory_gb').notNull(),
    cpus: integer('cpus').notNull(),
    userId: text('user_id').references(() => users.id, { onDelete: 'set null' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  () => [serviceAccess('subscription_deployments')],
).enableRLS()

/**
 * The outbox of subscription deploys: each applied plan checkout's deploy job, written in the checkout's own
 * transaction (functions/stripe/subscription.ts `applyCheckout`) and deleted once the queue has taken it. A row still
 * here is a deploy the queue has not taken (a publish that failed, a crash between the commit and the publish, or
 * between the publish and the delete): the deploy sweep publishes it again, deduplicated by `session_id`.
 * Infrastructure: service only (forced RLS, no grant to app_user).
 */
export const subscriptionDeployOutbox = pgTable(
  'subscription_deploy_outbox',
  {
    /** The Checkout Session: once per payment, and the queue's deduplication id. */
    sessionId: text('session_id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** The `POST /api/queue/subscription-deploy` body. */
    job: jsonb('job').$type<{ tier: string; stripeCustomerId: string; subscriptionId: string | null; userId: string }>().notNull(),
    /** Publishes that failed so far. */
    attempts: integer('attempts').notNull().default(0),
    lastError: text('last_error'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    /** The last try (or the write): the sweep waits from here. */
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('subscription_deploy_outbox_due_idx').on(t.updatedAt), serviceAccess('subscription_deploy_outbox')],
).enableRLS()

/**
 * A user's Google Calendar connection. Tokens are sealed like BYOK keys; `connected` turns false when the
 * grant is revoked, so calls answer "not connected" instead of failing against Google each time.
 */
export const calendarConnections = pgTable(
  'calendar_connections',
  {
    userId: text('user_id').primaryKey().references(() => users.id, { onDelete: 'cascade' }),
    calendarId: text('calendar_id').notNull(),
    timezone: text('timezone').notNull(),
    keyId: text('key_id').notNull(),
    accessToken: text('access_token').notNull(),
    refreshToken: text('refresh_token'),
    tokenExpiresAt: timestamp('token_expires_at', { withTimezone: true }),
    connected: boolean('connected').notNull().default(true),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [ownedBy('calendar_connections_owner', t.userId), serviceAccess('calendar_connections')],
).enableRLS()
