// `npm run db:migrate`: applies drizzle/ as the tables' owner: MIGRATION_DATABASE_URL when set, else
// DATABASE_URL (deployments), else the local PGlite.
import { migratePostgres, openPglite } from './database'

const url = process.env.MIGRATION_DATABASE_URL ?? process.env.DATABASE_URL
if (url) await migratePostgres(url)
else await (await openPglite(`${process.env.DATA_DIR ?? '.data'}/pglite`)).close()
console.log(`migrations applied (${url ? 'postgres' : 'pglite'})`)
