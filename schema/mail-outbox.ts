import { pgTable, text, timestamp } from 'drizzle-orm/pg-core'
import { serviceAccess } from './rls'

/**
 * The dev outbox: mail kept here (and logged) when no provider is configured. RLS on with no policy:
 * the user role sees nothing; only the service reads it.
 */
export const mailOutbox = pgTable('mail_outbox', {
  id: text('id').primaryKey().$defaultFn(() => crypto.randomUUID()),
  to: text('to').notNull(),
  subject: text('subject').notNull(),
  text: text('text').notNull(),
  kind: text('kind').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
}, () => [serviceAccess('mail_outbox')]).enableRLS()
