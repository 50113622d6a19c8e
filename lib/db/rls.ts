import { sql } from 'drizzle-orm'
import type { Db } from './client'
import type { CrossUserPurpose } from './cross-user'

/** The non-superuser role every signed-in user's queries run as; RLS policies are written for it. */
export const APP_ROLE = 'app_user'

/**
 * Runs `fn` in one transaction as `APP_ROLE` with `app.user_id` set, so the tables' row-level-security
 * policies confine it to `userId`'s rows even when a query forgets its `where`.
 */
export function withUser<T>(db: Db, userId: string, fn: (tx: Db) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    // One round trip: `role` is a setting too, and set_config(..., true) is SET LOCAL.
    await tx.execute(sql`select set_config('app.user_id', ${userId}, true), set_config('role', ${APP_ROLE}, true)`)
    return fn(tx as unknown as Db)
  })
}

/** The role the listed cross-user queries run as (lib/db/cross-user.ts). */
export const SERVICE_ROLE = 'app_service'

/**
 * Runs `fn` in one transaction as `SERVICE_ROLE`: the only way to read or write across users. `purpose`
 * names the entry of lib/db/cross-user.ts that allows it, so every such query is listed in one file.
 */
export function asService<T>(db: Db, _purpose: CrossUserPurpose, fn: (tx: Db) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select set_config('role', ${SERVICE_ROLE}, true)`)
    return fn(tx as unknown as Db)
  })
}

/** `withUser` for the signed-in caller of a route behind `requireSession`. */
export const asUser = <T>(c: { var: { services: { db: Db }; user?: { id: string } } }, fn: (tx: Db) => Promise<T>) => {
  const user = c.var.user
  if (!user) throw new Error('asUser needs a signed-in user (requireSession)')
  return withUser(c.var.services.db, user.id, fn)
}
