import pg from 'pg'
import { openPglite, openPostgres, type NodeDatabase } from '../../infra/database'
import type { Db } from '../../lib/db/client'
import { neonDb } from '../../lib/db/neon'
import { UpstashKv } from '../../lib/kv/upstash'
import { MemoryKv } from '../../lib/kv/memory'
import type { Kv, RateLimiter } from '../../lib/kv/types'
import { configureNeonForLocalProxy, startNeonProxy } from './neon-proxy'
import { startUpstashRestServer } from './upstash-rest-server'

/** `TEST_STORES=real` (the integration project): real Postgres through the Neon driver, real Redis through Upstash REST. */
export const realStores = process.env.TEST_STORES === 'real'
export const integrationConfigured = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL)

export interface TestStores {
  database: NodeDatabase
  kv: Kv & RateLimiter
  name: string
  close(): Promise<void>
}

/** A fresh, migrated database for one test file: in-memory PGlite, or a new database on the real server. */
export async function openTestStores(): Promise<TestStores> {
  if (!realStores) {
    const database = await openPglite()
    return { database, kv: new MemoryKv(), name: 'pglite+memory', close: () => database.close() }
  }
  const adminUrl = process.env.TEST_DATABASE_URL!
  const dbName = `t_${crypto.randomUUID().replace(/-/g, '').slice(0, 16)}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`create database ${dbName}`)
  const url = new URL(adminUrl)
  url.pathname = `/${dbName}`
  // Migrate over TCP, then serve the app through the production Neon driver over the WebSocket proxy.
  const migrated = await openPostgres(url.toString())
  await migrated.close()
  const proxy = await startNeonProxy()
  configureNeonForLocalProxy(proxy.port)
  const neon = neonDb(url.toString())
  const redis = await startUpstashRestServer({ redisUrl: process.env.TEST_REDIS_URL! })
  const database: NodeDatabase = { db: neon.db as Db, adapter: 'postgres', close: neon.close }
  return {
    database,
    kv: new UpstashKv(redis.url, redis.token),
    name: 'postgres(neon)+redis(upstash)',
    async close() {
      await neon.close()
      await proxy.close()
      await redis.close()
      await admin.query(`drop database if exists ${dbName} with (force)`)
      await admin.end()
    },
  }
}
