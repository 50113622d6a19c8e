import { sql } from 'drizzle-orm'
import { pgPolicy, pgRole } from 'drizzle-orm/pg-core'

/** Created by the hand-written roles migration (drizzle-kit does not emit roles or grants). */
export const appRole = pgRole('app_user').existing()
/** The role the named cross-user queries run as (lib/db/rls.ts `asService`, listed in lib/db/rls.ts `CROSS_USER_PURPOSES`). */
export const serviceRole = pgRole('app_service').existing()

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

/** Every RLS table's door for `app_service`: the cross-user queries listed in lib/db/rls.ts `CROSS_USER_PURPOSES`. */
export const serviceAccess = (table: string) =>
  pgPolicy(`${table}_service`, { as: 'permissive', to: serviceRole, for: 'all', using: sql`true`, withCheck: sql`true` })
