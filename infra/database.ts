import { PGlite } from '@electric-sql/pglite'
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres'
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator'
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite'
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator'
import { mkdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import type { Db } from '../lib/db/client'
import * as schema from '../schema'

export const migrationsFolder = fileURLToPath(new URL('../drizzle', import.meta.url))

/**
 * The login role the app serves as (drizzle/0006_rls_binds.sql): it owns nothing and can read nothing itself,
 * only through withUser (app_user) or asService (app_service). Migrations run as the tables' owner.
 */
export const APP_LOGIN_ROLE = 'app_api'

export interface NodeDatabase {
  db: Db
  adapter: 'pglite' | 'postgres'
  close(): Promise<void>
}

export interface PgliteDatabase extends NodeDatabase {
  /** The one PGlite connection, its session now `APP_LOGIN_ROLE` (tests build their own view on it). */
  client: PGlite
}

/**
 * PGlite on disk (or in memory when `dataDir` is omitted): migrated as its superuser on every open, then the
 * session continues as `APP_LOGIN_ROLE`, so RESET ROLE inside withUser lands on a role that sees nothing.
 * Limit: the session's authenticated user stays the superuser, so SQL that ran RESET SESSION AUTHORIZATION
 * would regain everything; no route runs SQL taken from input. Real Postgres has no such way back.
 */
export async function openPglite(dataDir?: string): Promise<PgliteDatabase> {
  if (dataDir) mkdirSync(dataDir, { recursive: true })
  const client = new PGlite(dataDir)
  const db = drizzlePglite({ client, schema })
  await migratePglite(db, { migrationsFolder })
  await client.exec(`set session authorization ${APP_LOGIN_ROLE}`)
  return { db: db as unknown as Db, adapter: 'pglite', client, close: () => client.close() }
}

/** Applies drizzle/ to the database at `url`, connected as the role in it (the tables' owner). */
export async function migratePostgres(url: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: url, max: 1 })
  try {
    await migratePg(drizzlePg({ client: pool, schema }), { migrationsFolder })
  } finally {
    await pool.end()
  }
}

/**
 * Any Postgres by URL through node-postgres (the local server with DATABASE_URL). Migrates first, as
 * `migrationUrl` (the owner) when given, else as `url`; then serves as `url`'s role, which should be app_api.
 */
export async function openPostgres(url: string, opts: { migrate?: boolean; migrationUrl?: string } = {}): Promise<NodeDatabase> {
  if (opts.migrate !== false) await migratePostgres(opts.migrationUrl ?? url)
  const pool = new pg.Pool({ connectionString: url, max: 10 })
  const db = drizzlePg({ client: pool, schema })
  return { db: db as unknown as Db, adapter: 'postgres', close: () => pool.end() }
}
