// `npm run db:migrate`: applies drizzle/ to DATABASE_URL (deployments) or to the local PGlite.
import { openPglite, openPostgres } from './database'

const url = process.env.DATABASE_URL
const database = url ? await openPostgres(url) : await openPglite(`${process.env.DATA_DIR ?? '.data'}/pglite`)
console.log(`migrations applied (${database.adapter})`)
await database.close()
