import type { Context } from 'hono'
import { createMiddleware } from 'hono/factory'
import type { PlanName } from './billing/plans'
import type { SessionCache } from './auth/session-cache'
import type { Config } from './config'
import type { Db, Reader } from './db/rls'
import type { Kv, RateLimiter } from './kv/types'
import { errorFields, log } from './log'
import type { RuntimeProvider } from './runtime/provider'

export interface RuntimeMetrics {
  /** Percentages 0-100; null where the runtime does not expose them (workerd). */
  cpuPercent: number | null
  memoryPercent: number | null
  uptimeSec: number | null
  runtime: string
}

/** Names the adapter serving each store, for the start-up banner and health reports. */
export interface AdapterNames {
  db: string
  kv: string
  queue: string
  storage: string
  runtimes: string
}

/** Everything a handler may touch, built per request by one middleware. Stores are created on first use. */
export interface Services {
  config: Config
  adapters: AdapterNames
  readonly db: Db
  /** Single-statement reads in the fewest round trips the driver allows (lib/db/rls.ts `Reader`). */
  readonly reader: Reader
  readonly kv: Kv
  readonly limiter: RateLimiter
  readonly queue: Queue
  readonly queueVerifier: QueueVerifier
  readonly storage: Storage
  /** Agent runtimes: Railway when configured, local processes under `npm start` (lib/runtime/provider.ts). */
  readonly runtimes: RuntimeProvider
  /** Resend when `RESEND_API_KEY` is set, else the `mail_outbox` table. */
  readonly mail: Mailer
  /** Sessions this isolate has looked up (lib/auth/session-cache.ts): one per process or isolate, not per request. */
  readonly sessionCache: SessionCache
  metrics(): Promise<RuntimeMetrics>
  clientIp(c: Context): string
  /** The client used HTTPS (directly, or to a trusted TLS-terminating proxy): cookies get `Secure`. */
  isHttps(c: Context): boolean
  /** Releases per-request connections once the response is sent. */
  dispose?(): Promise<void>
}

export interface SessionUser {
  id: string
  email: string
  name: string
  isAdmin: boolean
}

export type AppEnv = {
  Bindings: Record<string, unknown>
  Variables: {
    services: Services
    /** Made by the server for every request (lib/http/request-log.ts), returned as `X-Request-Id`. */
    requestId: string
    /** The caller's own `X-Request-Id`, sanitised and capped: logged beside `requestId`, never as it. */
    clientRequestId?: string
    user?: SessionUser
    /** Verified identity headers from the web tier (lib/auth/identity.ts). */
    identity?: { userId: string; email?: string; role: string }
    /** Set when the caller authenticated with a user API key (lib/auth/dual.ts). */
    apiKeyId?: string
    /** The caller's plan once `requirePlanMatch` has checked the plan headers (lib/auth/plan.ts). */
    plan?: PlanName
    /** The tightest rate limit this request passed so far, whose `RateLimit-*` headers it carries (lib/http/rate-limit.ts). */
    rateLimit?: { limit: number; remaining: number }
  }
}

/** The env after `requireSession` (lib/auth/session.ts): its handlers read `c.var.user` unchecked. */
export type SignedInEnv = AppEnv & { Variables: { user: SessionUser } }

/** A request's context before or after `requireSession`: what helpers that serve both take. */
export type AppContext = Context<AppEnv> | Context<SignedInEnv>

export type ServiceProvider = (c: Context<AppEnv>) => Services

export const servicesMiddleware = (provide: ServiceProvider) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const services = provide(c)
    c.set('services', services)
    try {
      await next()
    } finally {
      const done = services.dispose?.()
      if (done) {
        const settled = done.catch((e) => log.error('services.dispose_failed', errorFields(e)))
        try {
          c.executionCtx.waitUntil(settled)
        } catch {
          await settled // no execution context (Node, app.request in tests)
        }
      }
    }
  })

/** What the platform mails. `kind` names the template, for the outbox and for logs. */
export interface MailMessage {
  to: string
  subject: string
  text: string
  kind: string
}

/** Mail port: a real provider in production (Resend), the database outbox otherwise. */
export interface Mailer {
  /** Resolves once the message is accepted (stored or handed to the provider); throws otherwise. */
  send(msg: MailMessage): Promise<void>
}

/** Job queue and schedules (QStash in production, in-process when embedded). Deliveries are signed POSTs to a path. */
export interface PublishOptions {
  delaySec?: number
  retries?: number
  deduplicationId?: string
  /** At most `parallelism` deliveries with this `key` in flight at once (QStash flow control). */
  flowControl?: { key: string; parallelism: number }
}

export interface Queue {
  /** Delivers `body` as JSON to `path` (e.g. `/api/queue/chat`) on the web service, at least once. */
  publish(path: string, body: unknown, opts?: PublishOptions): Promise<{ messageId: string }>
  /** Delivers to `path` on a cron schedule; the same id replaces an existing schedule. */
  schedule(id: string, path: string, cron: string, body?: unknown): Promise<{ scheduleId: string }>
}

/** Verifies that a delivery came from the queue (QStash's `Upstash-Signature` JWT). */
export interface QueueVerifier {
  verify(signature: string, body: string, url: string): Promise<boolean>
}

/** Object storage port (S3 in production, files under DATA_DIR/files when embedded). */
export interface StoredObject {
  body: ReadableStream<Uint8Array>
  size: number
  contentType: string
}

export interface PutStreamOptions {
  /** The most the body can hold (the caller enforces it): lets S3 size its parts so the count stays within 10,000. */
  maxBytes?: number
}

export interface Storage {
  put(key: string, body: Uint8Array | ArrayBuffer, contentType: string): Promise<void>
  /**
   * Writes a body whose length is not known in advance, holding only a bounded slice of it in memory (local files:
   * one chunk; S3: one multipart part, uniform in size). Resolves with the byte count once the whole object is written and readable.
   * When the stream errors (a cancelled upload, a limit passed) or the store fails, rejects and leaves no object
   * under `key`: nothing half-written is ever readable.
   */
  putStream(key: string, body: ReadableStream<Uint8Array>, contentType: string, opts?: PutStreamOptions): Promise<{ size: number }>
  get(key: string): Promise<StoredObject | null>
  delete(key: string): Promise<void>
}
