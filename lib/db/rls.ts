import { sql } from 'drizzle-orm'
import type { BatchItem } from 'drizzle-orm/batch'
import type { Db } from './client'
import type { CrossUserPurpose } from './cross-user'

/** The non-superuser role every signed-in user's queries run as; RLS policies are written for it. */
export const APP_ROLE = 'app_user'
/** The role the listed cross-user queries run as (lib/db/cross-user.ts). */
export const SERVICE_ROLE = 'app_service'

/**
 * The row-isolation settings of `withUser` and `asService`, each one statement (one round trip: `role` is a
 * setting too). `set_config(..., true)` is SET LOCAL: it lasts the transaction (or the Neon batch).
 */
export const userSettings = (userId: string) => sql`select set_config('app.user_id', ${userId}, true), set_config('role', ${APP_ROLE}, true)`
export const serviceSettings = () => sql`select set_config('role', ${SERVICE_ROLE}, true)`

/**
 * Runs `fn` in one transaction as `APP_ROLE` with `app.user_id` set, so the tables' row-level-security
 * policies confine it to `userId`'s rows even when a query forgets its `where`.
 */
export function withUser<T>(db: Db, userId: string, fn: (tx: Db) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.execute(userSettings(userId))
    return fn(tx as unknown as Db)
  })
}

/**
 * Runs `fn` in one transaction as `SERVICE_ROLE`: the only way to read or write across users. `purpose`
 * names the entry of lib/db/cross-user.ts that allows it, so every such query is listed in one file.
 */
export function asService<T>(db: Db, _purpose: CrossUserPurpose, fn: (tx: Db) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.execute(serviceSettings())
    return fn(tx as unknown as Db)
  })
}

/** `withUser` for the signed-in caller of a route behind `requireSession` (its `SignedInEnv` has `user`). */
export const asUser = <T>(c: { var: { services: { db: Db }; user: { id: string } } }, fn: (tx: Db) => Promise<T>) =>
  withUser(c.var.services.db, c.var.user.id, fn)

/** A drizzle statement not yet run: what a `Reader` sends (awaitable alone, batchable on Neon's HTTP endpoint). */
export type Statement<T> = PromiseLike<T> & BatchItem<'pg'>
/** One statement, or several run in order where only the last one's result is wanted. */
export type Statements<T> = Statement<T> | readonly [...Statement<unknown>[], Statement<T>]

/**
 * Statements as a user (or as the service role, for a listed purpose) in as few database round trips as the
 * driver allows: one on Neon's HTTP endpoint (the settings and the statements go as one batch, which Neon runs
 * as one transaction), one transaction elsewhere. Answers the last statement's result. Work that decides
 * between statements on their results keeps `withUser`/`asService`.
 */
export interface Reader {
  asUser<T>(userId: string, build: (db: Db) => Statements<T>): Promise<T>
  asService<T>(purpose: CrossUserPurpose, build: (db: Db) => Statements<T>): Promise<T>
}

/** The statements `build` returns, as a list. */
export const statementList = <T>(built: Statements<T>): Statement<unknown>[] => (Array.isArray(built) ? [...built] : [built as Statement<T>])

/** Runs `statements` one after another in the caller's transaction; answers the last one's result. */
export async function runStatements<T>(statements: Statement<unknown>[]): Promise<T> {
  let last: unknown
  for (const statement of statements) last = await statement
  return last as T
}

/** The statements `build` makes on `tx`, run in order (`runStatements`). */
export const runInOrder = <T>(tx: Db, build: (db: Db) => Statements<T>) => runStatements<T>(statementList(build(tx)))


/** The `Reader` for drivers with interactive transactions only (PGlite, node-postgres). */
export const transactionReader = (db: Db): Reader => ({
  asUser: (userId, build) => withUser(db, userId, (tx) => runInOrder(tx, build)),
  asService: (purpose, build) => asService(db, purpose, (tx) => runInOrder(tx, build)),
})

/** `Reader.asUser` for the signed-in caller of a route behind `requireSession`. */
export const readAsUser = <T>(c: { var: { services: { reader: Reader }; user: { id: string } } }, build: (db: Db) => Statements<T>) =>
  c.var.services.reader.asUser(c.var.user.id, build)
