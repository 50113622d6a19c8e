import { index, pgTable, text, timestamp } from 'drizzle-orm/pg-core'
import { ownedBy, serviceAccess } from './rls'
import { users } from './users'

/**
 * Single-use email verification tokens; only the SHA-256 of the token is stored. `email` is the address the
 * link was sent to: a token verifies that address only, so a later email change makes it worthless.
 */
export const emailVerifications = pgTable(
  'email_verifications',
  {
    tokenHash: text('token_hash').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    email: text('email').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    usedAt: timestamp('used_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('email_verifications_user_idx').on(t.userId),
    ownedBy('email_verifications_owner', t.userId),
    serviceAccess('email_verifications'),
  ],
).enableRLS()
