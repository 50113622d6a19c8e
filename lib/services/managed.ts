import type { Context } from 'hono'
import { parseConfig, type Config } from '../config'
import type { AppEnv, Services } from '../context'
import type { Db } from '../db/client'
import { neonDb } from '../db/neon'
import { ApiError } from '../http/errors'
import { cfClientIp } from '../http/client-ip'
import { UpstashKv } from '../kv/upstash'
import { QStashQueue, QStashVerifier } from '../queue/qstash'
import { S3Storage } from '../storage/s3'

const notConfigured = (what: string): never => {
  throw new ApiError(503, `${what} not configured`)
}

/** Adapter names for a configuration: what the banner prints and what the Worker entry uses. */
export const managedAdapterNames = (config: Config) => ({
  db: config.DATABASE_URL ? 'neon' : 'none',
  kv: config.UPSTASH_REDIS_REST_URL ? 'upstash' : 'none',
  queue: config.QSTASH_TOKEN ? 'qstash' : 'none',
  storage: config.S3_BUCKET ? 's3' : 'none',
})

export function s3FromConfig(config: Config) {
  return new S3Storage({
    bucket: config.S3_BUCKET ?? notConfigured('Storage'),
    region: config.S3_REGION,
    endpoint: config.S3_ENDPOINT,
    accessKeyId: config.S3_ACCESS_KEY_ID,
    secretAccessKey: config.S3_SECRET_ACCESS_KEY,
    forcePathStyle: config.S3_FORCE_PATH_STYLE,
  })
}

export const upstashFromConfig = (config: Config) =>
  new UpstashKv(config.UPSTASH_REDIS_REST_URL ?? notConfigured('Rate limit store'), config.UPSTASH_REDIS_REST_TOKEN ?? '')

export const qstashFromConfig = (config: Config) =>
  new QStashQueue(config.QSTASH_TOKEN ?? notConfigured('Queue'), config.PUBLIC_URL ?? config.baseUrl, config.QSTASH_URL)

export const qstashVerifierFromConfig = (config: Config) =>
  new QStashVerifier(
    config.QSTASH_CURRENT_SIGNING_KEY ?? notConfigured('Queue signing keys'),
    config.QSTASH_NEXT_SIGNING_KEY ?? config.QSTASH_CURRENT_SIGNING_KEY!,
  )

/**
 * Services for a Worker: every store is the managed one, created on first use within this request and
 * released after it. A store that is not configured answers 503 "<store> not configured" when touched.
 */
export function managedServices(c: Context<AppEnv>): Services {
  const config = parseConfig(c.env ?? {})
  let db: { db: Db; close: () => Promise<void> } | undefined
  let kv: UpstashKv | undefined
  let storage: S3Storage | undefined
  let queue: QStashQueue | undefined
  return {
    config,
    adapters: managedAdapterNames(config),
    get db() {
      db ??= neonDb(config.DATABASE_URL ?? notConfigured('Database'))
      return db.db
    },
    get kv() {
      return (kv ??= upstashFromConfig(config))
    },
    get limiter() {
      return (kv ??= upstashFromConfig(config))
    },
    get queue() {
      return (queue ??= qstashFromConfig(config))
    },
    get queueVerifier() {
      return qstashVerifierFromConfig(config)
    },
    get storage() {
      return (storage ??= s3FromConfig(config))
    },
    // workerd exposes no CPU or memory figures; the platform enforces isolate limits itself.
    metrics: async () => ({ cpuPercent: null, memoryPercent: null, uptimeSec: null, runtime: 'workerd' }),
    clientIp: cfClientIp,
    async dispose() {
      storage?.dispose()
      await db?.close()
    },
  }
}
