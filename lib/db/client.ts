import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core'
import type * as schema from '../../schema'

export type Schema = typeof schema
/** Any drizzle Postgres database: Neon (Workers), node-postgres or PGlite (local), all with the same schema. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>
