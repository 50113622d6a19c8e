import { sql, type SQL } from 'drizzle-orm'
import type { PgColumn } from 'drizzle-orm/pg-core'

/**
 * `column = any($1)` with the values as one array parameter: what `inArray` means, in one parameter instead of one a
 * value, so a statement naming hundreds of ids costs the same to build and to parse as one naming a few (every driver
 * here, PGlite, node-postgres and Neon's, sends a JavaScript array as a Postgres array).
 */
export const anyOf = (column: PgColumn, values: readonly string[]): SQL => sql`${column} = any(${sql.param(values)})`
