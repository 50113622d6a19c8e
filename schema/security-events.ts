import { jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core'
import { serviceAccess } from './rls'

/**
 * Every cross-account-protection (RISC) event received, keyed by `jti` so a repeat is acknowledged and not
 * acted on. RLS on with no policy: only the service reads it.
 */
export const securityEvents = pgTable('security_events', {
  jti: text('jti').primaryKey(),
  issuer: text('issuer').notNull(),
  eventTypes: jsonb('event_types').$type<string[]>().notNull(),
  subject: text('subject'),
  email: text('email'),
  userId: text('user_id'),
  payload: jsonb('payload').notNull(),
  receivedAt: timestamp('received_at', { withTimezone: true }).notNull().defaultNow(),
  processedAt: timestamp('processed_at', { withTimezone: true }),
  outcome: text('outcome'),
}, () => [serviceAccess('security_events')]).enableRLS()
