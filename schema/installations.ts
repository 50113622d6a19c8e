import { pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'
import { ownedBy, serviceAccess } from './rls'
import { users } from './users'

/**
 * Self-hosted (`home`) and attached (`link`) runtimes registered with the backend, one per user and mode.
 * `status` is stored as `active` on each heartbeat; it reads as `inactive` after 10 minutes unseen.
 */
export const installations = pgTable(
  'installations',
  {
    id: text('id').primaryKey().$defaultFn(() => crypto.randomUUID()),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    mode: text('mode').notNull(),
    gatewayToken: text('gateway_token'),
    registeredAt: timestamp('registered_at', { withTimezone: true }).notNull().defaultNow(),
    lastSeen: timestamp('last_seen', { withTimezone: true }).notNull().defaultNow(),
    status: text('status').notNull().default('active'),
  },
  (t) => [uniqueIndex('installations_user_mode_idx').on(t.userId, t.mode), ownedBy('installations_owner', t.userId), serviceAccess('installations')],
).enableRLS()

export type Installation = typeof installations.$inferSelect
