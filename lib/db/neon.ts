import { neon, Pool } from '@neondatabase/serverless'
import type { SQL } from 'drizzle-orm'
import { drizzle as drizzleHttp } from 'drizzle-orm/neon-http'
import { drizzle } from 'drizzle-orm/neon-serverless'
import type { Db } from './rls'
import { type Reader, serviceSettings, type Statements, statementList, userSettings } from './rls'

/**
 * A Neon pool for one request: interactive transactions (needed for row isolation) go over its WebSocket. Handles
 * here are built per request, so without `schema`: its relational config costs ~0.1 ms of CPU a build (measured)
 * and nothing uses relational queries (`db.query.*`).
 */
export function neonDb(connectionString: string): { db: Db; close: () => Promise<void> } {
  const pool = new Pool({ connectionString })
  return { db: drizzle({ client: pool }) as unknown as Db, close: () => pool.end() }
}

/**
 * Reads over Neon's HTTP endpoint: the row-isolation settings and the statement go in one request, which Neon
 * runs as one transaction. No connection to open, so a signed-in read is one round trip.
 */
export function neonReader(connectionString: string): Reader {
  const http = drizzleHttp({ client: neon(connectionString) })
  const batch = async <T>(settings: SQL, build: (db: Db) => Statements<T>): Promise<T> => {
    const results = await http.batch([http.execute(settings), ...statementList(build(http as unknown as Db))])
    return results[results.length - 1] as T
  }
  return {
    asUser: (userId, build) => batch(userSettings(userId), build),
    asService: (_purpose, build) => batch(serviceSettings(), build),
  }
}
