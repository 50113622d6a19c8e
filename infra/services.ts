import { getConnInfo } from '@hono/node-server/conninfo'
import type { Context } from 'hono'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { SessionCache } from '../lib/auth/session-cache'
import { parseConfig } from '../lib/config'
import type { AdapterNames, AppEnv, ServiceProvider, Services, Queue, QueueVerifier, Storage } from '../lib/context'
import type { Db } from '../lib/db/rls'
import { clientIpBehindProxies, requestIsHttps, trustedProxyMatcher } from '../lib/http/client-ip'
import { MemoryKv } from '../lib/kv/memory'
import type { Kv, RateLimiter } from '../lib/kv/types'
import { mailerFor } from '../lib/mail'
import { QStashVerifier } from '../lib/queue/qstash'
import { qstashStore, qstashVerifier } from '../lib/services/stores/qstash'
import { s3Store } from '../functions/files/storage/store'
import { upstashStore } from '../lib/services/stores/upstash'
import { openPglite, openPostgres, PGLITE_MAINTENANCE_INTERVAL_MS, type NodeDatabase } from './database'
import { LocalQueue } from './local-queue'
import { databaseOutbox } from './queue-outbox'
import { LocalRuntimeProvider } from './local-runtime-provider'
import { railwayStore } from '../lib/services/stores/railway'
import type { RuntimeProvider } from '../lib/runtime/provider'
import { LocalStorage } from './local-storage'
import { nodeMetrics } from './metrics'
import { transactionReader } from '../lib/db/rls'
import { errorFields, log } from '../lib/log'

export interface NodeServicesOptions {
  env?: Record<string, string | undefined>
  /** An already-open database (tests: in-memory PGlite or a fresh Postgres database). */
  database?: NodeDatabase
  /** Where queued deliveries go: the local web app's fetch. Bound after the app exists. */
  deliver?: (req: Request) => Promise<Response>
  /** An already-open kv store (tests: Upstash REST in front of real Redis). */
  kv?: Kv & RateLimiter
  /** Tests call apps with `app.request()`, which has no socket. */
  clientIp?: (c: Context) => string
  /**
   * Whether the in-process queue keeps its messages and schedules in the database (infra/queue-outbox.ts), so a
   * restart delivers what was pending. On by default when this function opens the database itself (`npm start`);
   * tests that inject a database ask for it.
   */
  durableQueue?: boolean
}

export interface NodeServices {
  provider: ServiceProvider
  services: Services
  adapters: AdapterNames
  /** Binds the queue's receiver; with a durable queue, also starts delivering what the outbox kept from before. */
  setDeliver(fn: (req: Request) => Promise<Response>): void
  /** Resolves once the durable queue has picked up what the outbox kept (right away without one). */
  queueRecovered(): Promise<unknown>
  /**
   * VACUUM (ANALYZE) of the embedded database now, as the server does at start and every
   * `PGLITE_MAINTENANCE_INTERVAL_MS` (PGlite has no autovacuum); nothing for a database that keeps its own or was injected.
   */
  maintainDatabase(): Promise<void>
  close(): Promise<void>
}

/** Reads the socket's peer, or the client behind `TRUST_PROXY` proxies. */
function nodeClientIp(trustProxy: string | undefined) {
  const trusted = trustedProxyMatcher(trustProxy)
  return (c: Context) => {
    const peer = getConnInfo(c).remote.address ?? 'unknown'
    return trustProxy ? clientIpBehindProxies(peer, c.req.header('x-forwarded-for'), trusted) : peer
  }
}

/** HTTPS by the URL, or by X-Forwarded-Proto when the socket peer is a `TRUST_PROXY` proxy. */
function nodeIsHttps(trustProxy: string | undefined) {
  const trusted = trustedProxyMatcher(trustProxy)
  const peerTrusted = (c: Context) => {
    try {
      return trusted(getConnInfo(c).remote.address ?? '')
    } catch {
      return false // no socket (app.request in tests): no proxy either
    }
  }
  return (c: Context) => requestIsHttps(c, () => !!trustProxy && peerTrusted(c))
}

/**
 * One process, one set of stores shared by every family: each store is the managed one when configured,
 * the embedded one otherwise (PGlite under DATA_DIR, in-process kv and queue, files under DATA_DIR/files).
 */
export async function createNodeServices(opts: NodeServicesOptions = {}): Promise<NodeServices> {
  const env = opts.env ?? process.env
  const config = parseConfig(env)
  const dataDir = env.DATA_DIR ?? '.data'

  // Migrations run as the owner (MIGRATION_DATABASE_URL when set); the app serves as DATABASE_URL's role.
  const database =
    opts.database ??
    (config.DATABASE_URL
      ? await openPostgres(config.DATABASE_URL, {
          migrationUrl: env.MIGRATION_DATABASE_URL,
          connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
          queryTimeoutMs: config.DATABASE_QUERY_TIMEOUT_MS,
        })
      : await openPglite(join(dataDir, 'pglite')))

  // PGlite runs no autovacuum: the server keeps its tables itself (a database injected by a test is its opener's). One
  // run at a time; a failed one is logged and the next interval tries again.
  const upkeep = opts.database ? undefined : database.maintain?.bind(database)
  let maintaining: Promise<void> | undefined
  const maintainDatabase = async () => {
    if (!upkeep) return
    maintaining ??= upkeep()
      .catch((e) => log.warn('db.maintenance_failed', errorFields(e)))
      .finally(() => (maintaining = undefined))
    await maintaining
  }
  await maintainDatabase()
  const maintenanceTimer = upkeep ? setInterval(() => void maintainDatabase(), PGLITE_MAINTENANCE_INTERVAL_MS) : undefined
  maintenanceTimer?.unref()

  const kv: Kv & RateLimiter = opts.kv ?? (config.UPSTASH_REDIS_REST_URL ? upstashStore(config) : new MemoryKv())

  let deliver = opts.deliver ?? (async () => new Response('no receiver', { status: 503 }))
  // `npm start` keeps one under DATA_DIR (infra/local-secrets.ts); an app built here without one (tests) makes its own.
  const localKey = config.QSTASH_CURRENT_SIGNING_KEY ?? randomBytes(32).toString('hex')
  const durableQueue = opts.durableQueue ?? !opts.database
  const localQueue = config.QSTASH_TOKEN
    ? undefined
    : new LocalQueue({
        publicUrl: config.PUBLIC_URL ?? `http://127.0.0.1:${env.PORT ?? 8787}`,
        signingKey: localKey,
        deliver: (r) => deliver(r),
        outbox: durableQueue ? databaseOutbox(database.db as Db) : undefined,
      })
  // What the outbox kept from before this start is delivered once there is a receiver (`setDeliver`).
  let recovered: Promise<unknown> | undefined
  const queue: Queue = localQueue ?? qstashStore(config).queue
  const queueVerifier: QueueVerifier = config.QSTASH_TOKEN ? qstashVerifier(config) : new QStashVerifier(localKey, localKey)

  const storage: Storage = config.S3_BUCKET ? s3Store(config) : new LocalStorage(join(dataDir, 'files'))

  // Railway when configured; else a local process per agent under DATA_DIR/runtimes (killed on close).
  const railway = !!(config.RUNTIME_PROVIDER_TOKEN && config.RAILWAY_PROJECT_ID && config.RAILWAY_ENVIRONMENT_ID)
  const localRuntimes = railway ? undefined : new LocalRuntimeProvider({ dataDir })
  const runtimes: RuntimeProvider = localRuntimes ?? railwayStore(config)

  const adapters: AdapterNames = {
    db: config.DATABASE_URL ? 'postgres' : database.adapter,
    kv: opts.kv instanceof MemoryKv || !(opts.kv || config.UPSTASH_REDIS_REST_URL) ? 'memory' : 'upstash',
    queue: localQueue ? 'in-process' : 'qstash',
    storage: config.S3_BUCKET ? 's3' : 'local-files',
    runtimes: railway ? 'railway' : 'local-processes',
  }
  const clientIp = opts.clientIp ?? nodeClientIp(env.TRUST_PROXY)

  const services: Services = {
    config,
    adapters,
    db: database.db as Db,
    reader: database.reader ?? transactionReader(database.db as Db),
    kv,
    limiter: kv,
    queue,
    queueVerifier,
    storage,
    runtimes,
    mail: mailerFor(config, () => database.db as Db),
    sessionCache: new SessionCache(),
    metrics: nodeMetrics,
    clientIp,
    isHttps: nodeIsHttps(env.TRUST_PROXY),
  }
  return {
    provider: () => services,
    services,
    adapters,
    setDeliver(fn) {
      deliver = fn
      if (localQueue && durableQueue && !recovered) recovered = localQueue.recover().catch((e) => log.error('local_queue.recovery_failed', errorFields(e)))
    },
    queueRecovered: () => recovered ?? Promise.resolve(),
    maintainDatabase,
    async close() {
      clearInterval(maintenanceTimer)
      await maintaining
      await recovered
      await localQueue?.close()
      await localRuntimes?.close()
      if (!opts.database) await database.close() // an injected database belongs to its opener
    },
  }
}
