import { neon, neonConfig, Pool } from '@neondatabase/serverless'
import type { SQL } from 'drizzle-orm'
import { drizzle as drizzleHttp } from 'drizzle-orm/neon-http'
import { drizzle } from 'drizzle-orm/neon-serverless'
import { deadline } from '../deadline'
import { errorFields, log } from '../log'
import type { Db } from './rls'
import { CONNECT_TIMEOUT_MS, type DatabaseTimeouts, watchConnection, QUERY_TIMEOUT_MS, type Reader, serviceSettings, type Statements, statementList, userSettings } from './rls'

/**
 * Points the driver at a local Neon-compatible proxy (`host:port`) instead of Neon's endpoints: the WebSocket at
 * `/v1?address=<postgres host:port>` and SQL over HTTP at `/sql`, both without TLS, and no pipelined start-up (a local
 * Postgres under trust or SCRAM auth would take a pipelined password as a stray message). The driver's endpoint
 * settings are global to the isolate; every request of a Worker sets the same values.
 */
export function useLocalNeonProxy(proxy: string): void {
  neonConfig.wsProxy = (host, port) => `${proxy}/v1?address=${host}:${port}`
  neonConfig.useSecureWebSocket = false
  neonConfig.forceDisablePgSSL = true
  neonConfig.pipelineTLS = false
  neonConfig.pipelineConnect = false
  neonConfig.fetchEndpoint = `http://${proxy}/sql`
}

/**
 * A Neon pool for one request: interactive transactions (needed for row isolation) go over its WebSocket. Handles
 * here are built per request, so without `schema`: its relational config costs ~0.1 ms of CPU a build (measured)
 * and nothing uses relational queries (`db.query.*`). Connecting and each statement's answer are bounded
 * (`CONNECT_TIMEOUT_MS`, `QUERY_TIMEOUT_MS`); the server's statement timeout comes with the row-isolation settings.
 */
export function neonDb(connectionString: string, timeouts: DatabaseTimeouts = {}): { db: Db; close: () => Promise<void> } {
  const pool = new Pool({
    connectionString,
    connectionTimeoutMillis: timeouts.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
    query_timeout: timeouts.queryTimeoutMs ?? QUERY_TIMEOUT_MS,
  })
  pool.on('connect', watchConnection)
  // An idle connection lost (the server restarted, the network dropped it) is reported here, not thrown out of the
  // isolate; the pool opens a new one on the next checkout.
  pool.on('error', (e: Error) => log.warn('db.idle_connection_lost', errorFields(e)))
  return { db: drizzle({ client: pool }) as unknown as Db, close: () => pool.end() }
}

/**
 * Reads over Neon's HTTP endpoint: the row-isolation settings and the statement go in one request, which Neon
 * runs as one transaction. No connection to open, so a signed-in read is one round trip, which gives up after
 * `QUERY_TIMEOUT_MS` (a client per read, ~7 µs, since the driver takes its abort signal per client).
 */
export function neonReader(connectionString: string, timeouts: DatabaseTimeouts = {}): Reader {
  const timeoutMs = timeouts.queryTimeoutMs ?? QUERY_TIMEOUT_MS
  const batch = async <T>(settings: SQL, build: (db: Db) => Statements<T>): Promise<T> => {
    const bound = deadline(timeoutMs)
    try {
      const http = drizzleHttp({ client: neon(connectionString, { fetchOptions: { signal: bound.signal } }) })
      const results = await http.batch([http.execute(settings), ...statementList(build(http as unknown as Db))])
      return results[results.length - 1] as T
    } finally {
      bound.clear()
    }
  }
  return {
    asUser: (userId, build) => batch(userSettings(userId), build),
    asService: (_purpose, build) => batch(serviceSettings(), build),
  }
}
