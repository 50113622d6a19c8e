import { index, pgTable, text, timestamp } from 'drizzle-orm/pg-core'
import { ownedBy, serviceAccess } from './rls'
import { users } from './users'

/** Paired devices: `pending` → `approved` | `denied`; `approved` → `revoked` (spec "Device" state table). */
export const devices = pgTable(
  'devices',
  {
    id: text('id').primaryKey().$defaultFn(() => crypto.randomUUID()),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    status: text('status').notNull(),
    pairingCode: text('pairing_code'),
    ip: text('ip'),
    firstSeen: timestamp('first_seen', { withTimezone: true }).notNull().defaultNow(),
    lastSeen: timestamp('last_seen', { withTimezone: true }).notNull().defaultNow(),
    pairedAt: timestamp('paired_at', { withTimezone: true }),
  },
  (t) => [index('devices_user_idx').on(t.userId), ownedBy('devices_owner', t.userId), serviceAccess('devices')],
).enableRLS()

export type Device = typeof devices.$inferSelect
