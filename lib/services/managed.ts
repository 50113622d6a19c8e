import type { Context } from 'hono'
import { SessionCache } from '../auth/session-cache'
import { parseConfig, type Config } from '../config'
import type { AppEnv, ServiceProvider, Services, Mailer, Queue, QueueVerifier, Storage } from '../context'
import type { Db } from '../db/rls'
import { ApiError } from '../http/errors'
import { cfClientIp, requestIsHttps } from '../http/client-ip'
import type { Kv, RateLimiter } from '../kv/types'
import { mailerFor } from '../mail'
import type { RuntimeProvider } from '../runtime/provider'
import { type Reader, transactionReader } from '../db/rls'

export const notConfigured = (what: string): never => {
  throw new ApiError('NOT_CONFIGURED', `${what} not configured`)
}

/**
 * The managed stores a Worker uses, named by its entry (`createWorker(app, { db: neonStore })`), so each
 * function bundles only the drivers it needs. Factories run on first use within a request.
 */
export interface ManagedStores {
  db?: (config: Config) => { db: Db; reader?: Reader; close(): Promise<void> }
  kv?: (config: Config) => Kv & RateLimiter
  queue?: (config: Config) => { queue: Queue; verifier: QueueVerifier }
  storage?: (config: Config) => Storage & { dispose?(): void }
  runtimes?: (config: Config) => RuntimeProvider
}

const unavailable = (what: string) => (): never => notConfigured(what)

/**
 * Services for a Worker: each store is created on first use within this request and released after it.
 * A store that is not configured (or not part of this function) answers 503 "<store> not configured".
 */
export function managedServices(stores: ManagedStores): ServiceProvider {
  const sessionCache = new SessionCache() // per isolate: the provider is built once, at module load
  return (c: Context<AppEnv>): Services => {
    const config = parseConfig(c.env ?? {})
    const make = {
      db: stores.db ?? unavailable('Database'),
      kv: stores.kv ?? unavailable('Rate limit store'),
      queue: stores.queue ?? unavailable('Queue'),
      storage: stores.storage ?? unavailable('Storage'),
      runtimes: stores.runtimes ?? unavailable('Runtime provider'),
    }
    let db: ReturnType<typeof make.db> | undefined
    let kv: ReturnType<typeof make.kv> | undefined
    let queue: ReturnType<typeof make.queue> | undefined
    let storage: ReturnType<typeof make.storage> | undefined
    let runtimes: RuntimeProvider | undefined
    let mail: Mailer | undefined
    return {
      config,
      adapters: {
        db: stores.db && config.DATABASE_URL ? 'neon' : 'none',
        kv: stores.kv && config.UPSTASH_REDIS_REST_URL ? 'upstash' : 'none',
        queue: stores.queue && config.QSTASH_TOKEN ? 'qstash' : 'none',
        storage: stores.storage && config.S3_BUCKET ? 's3' : 'none',
        runtimes: stores.runtimes && config.RUNTIME_PROVIDER_TOKEN ? 'railway' : 'none',
      },
      get db() {
        return (db ??= make.db(config)).db
      },
      get reader() {
        const store = (db ??= make.db(config))
        return (store.reader ??= transactionReader(store.db))
      },
      get kv() {
        return (kv ??= make.kv(config))
      },
      get limiter() {
        return (kv ??= make.kv(config))
      },
      get queue() {
        return (queue ??= make.queue(config)).queue
      },
      get queueVerifier() {
        return (queue ??= make.queue(config)).verifier
      },
      get storage() {
        return (storage ??= make.storage(config))
      },
      get runtimes() {
        return (runtimes ??= make.runtimes(config))
      },
      get mail() {
        return (mail ??= mailerFor(config, () => this.db))
      },
      sessionCache,
      // workerd exposes no CPU or memory figures; the platform enforces isolate limits itself.
      metrics: async () => ({ cpuPercent: null, memoryPercent: null, uptimeSec: null, runtime: 'workerd' }),
      clientIp: cfClientIp,
      // Cloudflare terminates TLS and hands the Worker the client's own scheme in the URL.
      isHttps: (c) => requestIsHttps(c, () => false),
      async dispose() {
        storage?.dispose?.()
        await db?.close()
      },
    }
  }
}
