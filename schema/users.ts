import { pgTable, text, timestamp } from 'drizzle-orm/pg-core'
import { ownedBy } from './rls'

export const users = pgTable(
  'users',
  {
    id: text('id').primaryKey().$defaultFn(() => crypto.randomUUID()),
    // stored lower-cased: sign-in is case-insensitive both ways
    email: text('email').notNull().unique(),
    name: text('name').notNull(),
    passwordHash: text('password_hash'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [ownedBy('users_self', t.id)],
).enableRLS()

export type User = typeof users.$inferSelect
