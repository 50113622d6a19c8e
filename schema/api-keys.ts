import { index, pgTable, text, timestamp } from 'drizzle-orm/pg-core'
import { ownedBy, serviceAccess } from './rls'
import { users } from './users'

/**
 * API keys: the raw key is shown once. Looked up by its first 10 characters; `keyHash` is bcrypt (the
 * spec's web-side scheme), `keySha256` the backend's and dual authentication's fast check.
 */
export const apiKeys = pgTable(
  'api_keys',
  {
    id: text('id').primaryKey().$defaultFn(() => crypto.randomUUID()),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    prefix: text('prefix').notNull(),
    keyHash: text('key_hash').notNull(),
    keySha256: text('key_sha256').notNull().unique(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
  },
  (t) => [index('api_keys_prefix_idx').on(t.prefix), index('api_keys_user_idx').on(t.userId), ownedBy('api_keys_owner', t.userId), serviceAccess('api_keys')],
).enableRLS()

export type ApiKey = typeof apiKeys.$inferSelect
