import { sql } from 'drizzle-orm'
import { pgPolicy, pgRole } from 'drizzle-orm/pg-core'

/** Created by the hand-written roles migration (drizzle-kit does not emit roles or grants). */
export const appRole = pgRole('app_user').existing()

export const currentUserId = sql`current_setting('app.user_id', true)`

/** The one policy shape for user-owned rows: read and write only where `column` is the signed-in user. */
export const ownedBy = (name: string, column: { name: string }) =>
  pgPolicy(name, {
    as: 'permissive',
    to: appRole,
    for: 'all',
    using: sql`${sql.identifier(column.name)} = ${currentUserId}`,
    withCheck: sql`${sql.identifier(column.name)} = ${currentUserId}`,
  })
