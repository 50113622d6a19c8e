import type { Config } from '../../config'
import { neonDb, neonReader, useLocalNeonProxy } from '../../db/neon'
import { notConfigured } from '../managed'

/**
 * Neon Postgres: single-statement reads over its HTTP endpoint (one round trip, `Reader`), everything else over
 * its WebSocket driver (interactive transactions for row isolation). The pool connects only when first used.
 */
export const neonStore = (config: Config) => {
  const url = config.DATABASE_URL ?? notConfigured('Database')
  if (config.NEON_LOCAL_PROXY) useLocalNeonProxy(config.NEON_LOCAL_PROXY)
  const timeouts = { connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS, queryTimeoutMs: config.DATABASE_QUERY_TIMEOUT_MS }
  return { ...neonDb(url, timeouts), reader: neonReader(url, timeouts) }
}
