import { index, pgTable, text, timestamp } from 'drizzle-orm/pg-core'
import { ownedBy, serviceAccess } from './rls'
import { users } from './users'

/** Database-backed sessions: the cookie carries a random token, only its SHA-256 is stored here. */
export const sessions = pgTable(
  'sessions',
  {
    tokenHash: text('token_hash').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    ip: text('ip'),
    userAgent: text('user_agent'),
  },
  (t) => [index('sessions_user_idx').on(t.userId), ownedBy('sessions_owner', t.userId), serviceAccess('sessions')],
).enableRLS()

export type Session = typeof sessions.$inferSelect
