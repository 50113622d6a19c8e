import { boolean, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'
import { ownedBy, serviceAccess } from './rls'
import { users } from './users'

/**
 * Identity-provider links (Google): one per provider subject. Tokens are kept for the provider's APIs and
 * dropped on a RISC `tokens-revoked`; `signInDisabled` follows RISC `account-disabled` / `account-enabled`.
 */
export const accounts = pgTable(
  'accounts',
  {
    id: text('id').primaryKey().$defaultFn(() => crypto.randomUUID()),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    provider: text('provider').notNull(),
    providerAccountId: text('provider_account_id').notNull(),
    email: text('email'),
    accessToken: text('access_token'),
    refreshToken: text('refresh_token'),
    expiresAt: timestamp('expires_at', { withTimezone: true }),
    scope: text('scope'),
    signInDisabled: boolean('sign_in_disabled').notNull().default(false),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('accounts_provider_subject_idx').on(t.provider, t.providerAccountId), ownedBy('accounts_owner', t.userId), serviceAccess('accounts')],
).enableRLS()

export type Account = typeof accounts.$inferSelect
