import { Pool } from '@neondatabase/serverless'
import { drizzle } from 'drizzle-orm/neon-serverless'
import * as schema from '../../schema'
import type { Db } from './client'

/** A Neon pool for one request: interactive transactions (needed for row isolation) go over its WebSocket. */
export function neonDb(connectionString: string): { db: Db; close: () => Promise<void> } {
  const pool = new Pool({ connectionString })
  return { db: drizzle({ client: pool, schema }) as unknown as Db, close: () => pool.end() }
}
