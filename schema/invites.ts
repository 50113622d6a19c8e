import { sql } from 'drizzle-orm'
import { index, pgPolicy, pgTable, text, timestamp } from 'drizzle-orm/pg-core'
import { appRole, currentUserId, serviceAccess } from './rls'
import { users } from './users'

/**
 * Invites: a 64-hex code from 32 random bytes. `status` is derived (used when `usedAt` is set, expired once
 * `expiresAt` has passed unused, else active). User-made invites carry `createdBy` and the invitee's `name`;
 * admin-made ones an `email`.
 */
export const invites = pgTable(
  'invites',
  {
    code: text('code').primaryKey(),
    email: text('email'),
    name: text('name'),
    audience: text('audience').notNull().default('headliner'),
    createdBy: text('created_by').references(() => users.id, { onDelete: 'set null' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }),
    usedAt: timestamp('used_at', { withTimezone: true }),
    usedBy: text('used_by').references(() => users.id, { onDelete: 'set null' }),
  },
  (t) => [
    index('invites_created_at_idx').on(t.createdAt),
    // a user sees the invites they made; verification and admin listing run as the service
    pgPolicy('invites_creator', {
      as: 'permissive',
      to: appRole,
      for: 'all',
      using: sql`created_by = ${currentUserId}`,
      withCheck: sql`created_by = ${currentUserId}`,
    }), serviceAccess('invites')],
).enableRLS()

export type Invite = typeof invites.$inferSelect
