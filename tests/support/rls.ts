import { expect } from 'vitest'
import type { Db } from '../../lib/db/rls'
import { withUser } from '../../lib/db/rls'
import type { AnyPgColumn, PgTable } from 'drizzle-orm/pg-core'

/**
 * The row policy itself: `userId`'s transaction selects from `table` with no `where` and gets rows, all of them
 * their own. Returns the rows for further checks.
 */
export async function expectOwnRowsOnly<T extends PgTable & { userId: AnyPgColumn }>(db: Db, userId: string, table: T) {
  const rows = (await withUser(db, userId, (tx) => tx.select().from(table as PgTable))) as Array<T['$inferSelect'] & { userId: string | null }>
  expect(rows.length).toBeGreaterThan(0)
  expect(rows.every((r) => r.userId === userId)).toBe(true)
  return rows
}
