import type { Config } from '../../config'
import { neonDb } from '../../db/neon'
import { notConfigured } from '../managed'

/** Neon Postgres over its WebSocket driver (interactive transactions for row isolation). */
export const neonStore = (config: Config) => neonDb(config.DATABASE_URL ?? notConfigured('Database'))
