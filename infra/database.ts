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

export interface NodeDatabase {
  db: Db
  adapter: 'pglite' | 'postgres'
  close(): Promise<void>
}

/** PGlite on disk (or in memory when `dataDir` is omitted), migrated. */
export async function openPglite(dataDir?: string): Promise<NodeDatabase> {
  if (dataDir) mkdirSync(dataDir, { recursive: true })
  const client = new PGlite(dataDir)
  const db = drizzlePglite({ client, schema })
  await migratePglite(db, { migrationsFolder })
  return { db: db as unknown as Db, adapter: 'pglite', close: () => client.close() }
}

/** Any Postgres by URL through node-postgres (the local server with DATABASE_URL), migrated. */
export async function openPostgres(url: string, opts: { migrate?: boolean } = {}): Promise<NodeDatabase> {
  const pool = new pg.Pool({ connectionString: url, max: 10 })
  const db = drizzlePg({ client: pool, schema })
  if (opts.migrate !== false) await migratePg(db, { migrationsFolder })
  return { db: db as unknown as Db, adapter: 'postgres', close: () => pool.end() }
}
