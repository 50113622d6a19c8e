import { sql } from 'drizzle-orm'
import { integer, pgPolicy, pgTable, text, timestamp } from 'drizzle-orm/pg-core'
import { appRole, currentUserId, serviceAccess } from './rls'
import { users } from './users'

/** One row per referred sign-up; both sides are credited once, when the referred account verifies its email. */
export const referrals = pgTable(
  'referrals',
  {
    referredId: text('referred_id')
      .primaryKey()
      .references(() => users.id, { onDelete: 'cascade' }),
    referrerId: text('referrer_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    credits: integer('credits').notNull(),
    // null until the referred account verified its email and both sides were credited
    creditedAt: timestamp('credited_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  () => [
    // either side of a referral may read it; nobody writes through the user role
    pgPolicy('referrals_either_side', {
      as: 'permissive',
      to: appRole,
      for: 'select',
      using: sql`referrer_id = ${currentUserId} or referred_id = ${currentUserId}`,
    }), serviceAccess('referrals')],
).enableRLS()
