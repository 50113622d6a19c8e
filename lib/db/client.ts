import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core'

/**
 * Any drizzle Postgres database: Neon (Workers), node-postgres or PGlite (local). Built without the relational
 * schema (handles are made per request; see lib/db/neon.ts), so queries use the SQL-like builder, not `db.query`.
 */
export type Db = PgDatabase<PgQueryResultHKT>
