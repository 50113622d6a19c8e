import { sql } from 'drizzle-orm'
import { index, integer, jsonb, numeric, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'
import { agents } from './agents'
import { ownedBy, serviceAccess } from './rls'
import { users } from './users'

/**
 * A chat message queued for the user's agent (spec 2 "Job"; `GET /api/jobs/:jobId`). `status`: `queued`,
 * `running`, `succeeded`, `failed`. `attempts` counts deliveries to the runtime; `result` is the runtime's answer.
 * `weight` is the workload slots its ticket holds (2 over 800 characters). A claim (`POST /api/jobs/:id/claim`)
 * names the one agent that took it and leases the job to it for `JOB_LEASE_SEC`: the holder completes or fails it
 * (`/complete`, `/fail`); an expired lease returns it to the queue (read as `queued`, claimable again).
 */
export const chatJobs = pgTable(
  'chat_jobs',
  {
    id: text('id').primaryKey().$defaultFn(() => crypto.randomUUID()),
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    agentId: text('agent_id').notNull().references(() => agents.id, { onDelete: 'cascade' }),
    message: text('message').notNull(),
    weight: integer('weight').notNull().default(1),
    status: text('status').notNull().default('queued'),
    attempts: integer('attempts').notNull().default(0),
    result: jsonb('result'),
    error: text('error'),
    claimedByAgentId: text('claimed_by_agent_id'),
    claimedAt: timestamp('claimed_at', { withTimezone: true }),
    // The current claim's lease: only its holder (who was given `lease_id`) may complete or fail the job, until
    // `lease_expires_at`; past it the job is back in the queue for the next claimer.
    leaseId: text('lease_id'),
    leaseExpiresAt: timestamp('lease_expires_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('chat_jobs_user_idx').on(t.userId, t.createdAt), ownedBy('chat_jobs_owner', t.userId), serviceAccess('chat_jobs')],
).enableRLS()

export type ChatJob = typeof chatJobs.$inferSelect

/**
 * A dangerous tool call waiting for its owner's decision (spec 2 "Permission request"): made by the classify
 * hook (as the service), decided once by the owner (`pending` → `approved` or `denied`), or `expired` when nobody
 * decided it within 10 minutes of `createdAt` (a denial; a pending row that old reads as expired before the
 * expiry job marks it). `userId` is null when
 * the hook named no known user or agent: nobody can approve it, so the call stays denied.
 */
export const permissionRequests = pgTable(
  'permission_requests',
  {
    id: text('id').primaryKey().$defaultFn(() => crypto.randomUUID()),
    userId: text('user_id').references(() => users.id, { onDelete: 'cascade' }),
    // as the hook named it (`unknown` by default): not a foreign key
    agentId: text('agent_id').notNull(),
    toolName: text('tool_name').notNull(),
    toolInput: jsonb('tool_input').$type<Record<string, unknown>>().notNull().default({}),
    reason: text('reason').notNull(),
    status: text('status').notNull().default('pending'),
    decidedAt: timestamp('decided_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('permission_requests_user_idx').on(t.userId, t.status, t.createdAt),
    ownedBy('permission_requests_owner', t.userId),
    serviceAccess('permission_requests'),
  ],
).enableRLS()

export type PermissionRequest = typeof permissionRequests.$inferSelect

/**
 * Every on-chain payment the gateway accepted, keyed by transaction hash: a payment pays for one thing, once.
 * `purpose` `mpp` (one plugin call, `reference` the challenge nonce) or `session_deposit` (`reference` the
 * payment session). Amounts in the token's base units. Anonymous wallets, no user: service access only.
 */
export const chainPayments = pgTable(
  'chain_payments',
  {
    txHash: text('tx_hash').primaryKey(),
    purpose: text('purpose').notNull(),
    reference: text('reference').notNull(),
    chainId: integer('chain_id').notNull(),
    token: text('token').notNull(),
    payer: text('payer').notNull(),
    recipient: text('recipient').notNull(),
    amount: numeric('amount', { precision: 78, scale: 0 }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  () => [serviceAccess('chain_payments')],
).enableRLS()

/**
 * A pre-funded payment session, spent call by call against vouchers the wallet signs (EIP-712), in base units of
 * its token. `source` says what funds it: `deposit`, one verified on-chain deposit from `walletAddress` (lower case)
 * (`POST /api/wallet/sessions`, `depositTxHash` its transaction); `card`, the wallet's prepaid balance that card
 * top-ups add to (`wallet_top_ups`; no transaction hash), one per wallet.
 */
export const paymentSessions = pgTable(
  'payment_sessions',
  {
    id: text('id').primaryKey().$defaultFn(() => crypto.randomUUID()),
    walletAddress: text('wallet_address').notNull(),
    depositTxHash: text('deposit_tx_hash').unique(),
    source: text('source').notNull().default('deposit'),
    chainId: integer('chain_id').notNull(),
    token: text('token').notNull(),
    depositAmount: numeric('deposit_amount', { precision: 78, scale: 0 }).notNull(),
    spentAmount: numeric('spent_amount', { precision: 78, scale: 0 }).notNull().default('0'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('payment_sessions_wallet_idx').on(t.walletAddress),
    // one card-funded session per wallet: every top-up of that wallet adds to it
    uniqueIndex('payment_sessions_card_wallet_idx').on(t.walletAddress).where(sql`source = 'card'`),
    serviceAccess('payment_sessions'),
  ],
).enableRLS()

/** Each voucher a session accepted: its nonce is used once, in the same transaction as the debit it paid. */
export const paymentSessionVouchers = pgTable(
  'payment_session_vouchers',
  {
    sessionId: text('session_id').notNull().references(() => paymentSessions.id, { onDelete: 'cascade' }),
    nonce: numeric('nonce', { precision: 78, scale: 0 }).notNull(),
    cumulativeAmount: numeric('cumulative_amount', { precision: 78, scale: 0 }).notNull(),
    amount: numeric('amount', { precision: 78, scale: 0 }).notNull(),
    pluginId: text('plugin_id').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.nonce] }), serviceAccess('payment_session_vouchers')],
).enableRLS()
