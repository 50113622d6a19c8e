import { bigint, boolean, index, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core'
import { ownedBy, serviceAccess } from './rls'
import { users } from './users'

/** WebAuthn credentials. `id` is the credential id (base64url); the signature counter is checked and stored. */
export const passkeys = pgTable(
  'passkeys',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    publicKey: text('public_key').notNull(),
    counter: bigint('counter', { mode: 'number' }).notNull().default(0),
    transports: jsonb('transports').$type<string[]>(),
    deviceType: text('device_type'),
    backedUp: boolean('backed_up').notNull().default(false),
    label: text('label').notNull().default('Passkey'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
  },
  (t) => [index('passkeys_user_idx').on(t.userId), ownedBy('passkeys_owner', t.userId), serviceAccess('passkeys')],
).enableRLS()

export type Passkey = typeof passkeys.$inferSelect
