import { bigserial, index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core'
import { serviceAccess } from './rls'

/**
 * The embedded queue's outbox (infra/local-queue.ts; QStash keeps its own in production): every message published
 * while the local server runs, so a restart delivers what was pending. Infrastructure, not a user's data: RLS on
 * (forced) with the service's door only, read and written under the `localQueue` purpose.
 * `state`: `pending` (waiting for `not_before`, or for its next attempt), `delivered`, `failed` (retries spent);
 * finished rows stay for the deduplication window, then are pruned. `seq` orders messages due at the same time.
 */
export const queueMessages = pgTable(
  'queue_messages',
  {
    seq: bigserial('seq', { mode: 'number' }).primaryKey(),
    messageId: text('message_id').notNull().unique(),
    path: text('path').notNull(),
    body: text('body').notNull(),
    deduplicationId: text('deduplication_id'),
    notBefore: timestamp('not_before', { withTimezone: true }).notNull(),
    /** The next delivery's `Upstash-Retried` (0 before the first). */
    attempt: integer('attempt').notNull().default(0),
    retries: integer('retries').notNull(),
    flowControl: jsonb('flow_control').$type<{ key: string; parallelism: number }>(),
    scheduleId: text('schedule_id'),
    state: text('state').notNull().default('pending'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('queue_messages_due_idx').on(t.state, t.notBefore, t.seq),
    index('queue_messages_dedup_idx').on(t.deduplicationId, t.createdAt),
    serviceAccess('queue_messages'),
  ],
).enableRLS()

/** The embedded queue's cron schedules (same id replaces), with their last run: a restart re-arms them, missed runs skipped. */
export const queueSchedules = pgTable(
  'queue_schedules',
  {
    id: text('id').primaryKey(),
    path: text('path').notNull(),
    cron: text('cron').notNull(),
    body: text('body').notNull(),
    lastRunAt: timestamp('last_run_at', { withTimezone: true }),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  () => [serviceAccess('queue_schedules')],
).enableRLS()

export type QueueMessage = typeof queueMessages.$inferSelect
