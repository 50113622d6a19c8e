import type { PGlite, Transaction } from '@electric-sql/pglite'
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite'
import { readFileSync } from 'node:fs'
import pg from 'pg'
import { inject } from 'vitest'
import { APP_LOGIN_ROLE, migratePostgres, openPglite, type NodeDatabase } from '../../infra/database'
import type { Db } from '../../lib/db/rls'
import { SERVICE_ROLE } from '../../lib/db/rls'
import { neonDb, neonReader } from '../../lib/db/neon'
import { UpstashKv } from '../../lib/kv/upstash'
import { MemoryKv } from '../../lib/kv/memory'
import type { Kv, RateLimiter } from '../../lib/kv/types'
import * as schema from '../../schema'
import { FailingKv } from './failing-kv'
import { startFaultProxy, type FaultProxy } from './fault-proxy'
import { configureNeonForLocalProxy, startNeonProxy } from './neon-proxy'
import { startUpstashRestServer } from './upstash-rest-server'

/** `TEST_STORES=real` (the integration project): real Postgres through the Neon driver, real Redis through Upstash REST. */
export const realStores = process.env.TEST_STORES === 'real'
export const integrationConfigured = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL)

/** The tests' own login role on real Postgres: sees across users (member of app_service), serves nothing. */
export const TEST_ROLE = 'app_test'

export interface TestStores {
  /** The app's connection, as `APP_LOGIN_ROLE`: a query outside withUser/asService is refused. */
  appDatabase: NodeDatabase
  /** The tests' handle for seeding and asserting (harness `h.db`): sees every row, through the service role. */
  database: NodeDatabase
  kv: Kv & RateLimiter
  name: string
  /** With `openTestStores({ faults: true })`: how to take the app's stores down (see `StoreFaults`). */
  faults?: StoreFaults
  /** Cumulative traffic from the app and the tests to the database and the kv store (see round-trips.ts). */
  traffic(): StoreTraffic
  close(): Promise<void>
}

export interface StoreTraffic {
  /** Network request/response turns (real stores); calls into PGlite, a transaction counting one (embedded). */
  dbRoundTrips: number
  /** SQL statements sent, BEGIN and COMMIT included. */
  dbStatements: number
  /** Requests to the kv store (Upstash REST requests; calls on the in-process store). */
  kvRoundTrips: number
}

/**
 * The app's stores, made to fail (the tests' own handle, `database`, always reaches the database directly):
 * - real stores: `database` is a TCP fault proxy between the app (both Neon paths) and Postgres, `kv` an HTTP fault
 *   proxy in front of the Upstash REST server (tests/support/fault-proxy.ts);
 * - embedded: `kvStore.down` makes every kv call fail as the Upstash adapter's do, `closeDatabase` closes the app's
 *   PGlite (for good: nothing reopens it).
 * The app's timeouts are `timeouts` (short, so a test of a silent store stays fast).
 */
export interface StoreFaults {
  database?: FaultProxy
  kv?: FaultProxy
  kvStore?: FailingKv
  closeDatabase?: () => Promise<void>
  timeouts: { kvMs: number; connectMs: number; queryMs: number }
}

export interface TestStoreOptions {
  /** Puts the app's stores behind switchable faults, with short timeouts: `TestStores.faults`. */
  faults?: boolean
}

const FAULT_TIMEOUTS = { kvMs: 400, connectMs: 500, queryMs: 700 }

/** Counts calls into the one PGlite connection: each top-level call is one unit, a transaction with its statements. */
function countPglite(client: PGlite, traffic: StoreTraffic) {
  const query = client.query.bind(client)
  const exec = client.exec.bind(client)
  const transaction = client.transaction.bind(client)
  Object.assign(client, {
    query: (...args: Parameters<PGlite['query']>) => (traffic.dbRoundTrips++, traffic.dbStatements++, query(...args)),
    exec: (...args: Parameters<PGlite['exec']>) => (traffic.dbRoundTrips++, traffic.dbStatements++, exec(...args)),
    transaction: <T>(fn: (tx: Transaction) => Promise<T>) => {
      traffic.dbRoundTrips++
      traffic.dbStatements += 2 // BEGIN and COMMIT (or ROLLBACK)
      return transaction((tx) => {
        const counted = Object.create(tx) as Transaction
        counted.query = (...args: Parameters<Transaction['query']>) => (traffic.dbStatements++, tx.query(...args))
        counted.exec = (...args: Parameters<Transaction['exec']>) => (traffic.dbStatements++, tx.exec(...args))
        return fn(counted)
      })
    },
  })
}

/**
 * Counts every call on the in-process kv store, as one request each. A call another makes as it starts (the limiter
 * counting through `incr`, `incr` running its script: one script request on Upstash) is part of its caller's; the
 * store makes those calls synchronously, so a depth held only while the outer call starts tells them apart, and
 * concurrent callers never hide one another.
 */
function countKv(kv: MemoryKv, traffic: StoreTraffic) {
  let starting = 0
  for (const method of ['get', 'set', 'take', 'del', 'incr', 'eval', 'limit'] as const) {
    const original = (kv[method] as (...a: unknown[]) => unknown).bind(kv)
    Object.assign(kv, {
      [method]: (...args: unknown[]) => {
        if (starting === 0) traffic.kvRoundTrips++
        starting++
        try {
          return original(...args)
        } finally {
          starting--
        }
      },
    })
  }
}

/**
 * A drizzle handle on the app's PGlite whose every query runs in its own transaction as the service role,
 * so tests see across users while the app's session stays `APP_LOGIN_ROLE`. PGlite serialises transactions.
 */
export function pgliteServiceView(client: PGlite): Db {
  const asService = <T>(fn: (tx: Transaction) => Promise<T>) =>
    client.transaction(async (tx) => {
      await tx.exec(`set local role ${SERVICE_ROLE}`)
      return fn(tx)
    })
  const view = {
    query: (q: string, params?: unknown[], opts?: object) => asService((tx) => tx.query(q, params, opts)),
    exec: (q: string, opts?: object) => asService((tx) => tx.exec(q, opts)),
    transaction: <T>(fn: (tx: Transaction) => Promise<T>) => asService(fn),
  }
  return drizzlePglite({ client: view as unknown as PGlite, schema }) as unknown as Db
}

/** Creates `TEST_ROLE` once per cluster, and makes the owner a member of both logins (see the drop in `close`); files open stores concurrently, so a lost race is fine. */
export async function ensureTestRole(admin: pg.Client) {
  await admin.query(`do $$ begin
    begin create role ${TEST_ROLE} login inherit; exception when duplicate_object or unique_violation then null; end;
    begin grant app_service, app_user to ${TEST_ROLE};
    exception when others then
      if not (pg_has_role('${TEST_ROLE}', 'app_service', 'member') and pg_has_role('${TEST_ROLE}', 'app_user', 'member')) then raise; end if;
    end;
    -- DROP DATABASE ... WITH (FORCE) terminates leftover backends, which needs membership in their roles: a
    -- backend of the app's or the tests' login can outlive its closed WebSocket for a moment.
    begin execute format('grant ${APP_LOGIN_ROLE}, ${TEST_ROLE} to %I', current_user);
    exception when others then
      if not (pg_has_role(current_user, '${APP_LOGIN_ROLE}', 'member') and pg_has_role(current_user, '${TEST_ROLE}', 'member')) then raise; end if;
    end;
  end $$`)
}

const asRole = (url: URL, role: string) => Object.assign(new URL(url), { username: role }).toString()

let sharedProxy: { proxy: Promise<Awaited<ReturnType<typeof startNeonProxy>>>; users: number } | undefined

/**
 * One Neon proxy per test process, shared by every open store: the driver's endpoint settings are module-global,
 * so a second proxy would take over the first one's clients, and closing it would strand them.
 */
async function acquireNeonProxy() {
  sharedProxy ??= {
    users: 0,
    proxy: startNeonProxy().then((p) => {
      configureNeonForLocalProxy(p.port)
      return p
    }),
  }
  const entry = sharedProxy
  entry.users++
  const proxy = await entry.proxy
  return {
    traffic: proxy.traffic,
    endDatabase: proxy.endDatabase,
    async close() {
      if (--entry.users > 0) return
      if (sharedProxy === entry) sharedProxy = undefined
      await proxy.close()
    },
  }
}

let template: Blob | undefined

/** The migrated database the run's global set-up dumped (tests/support/global-setup.ts), read once per process. */
export function pgliteTemplate(): Blob | undefined {
  if (template) return template
  const file = inject('pgliteTemplate')
  if (!file) return undefined
  template = new Blob([readFileSync(file)])
  return template
}

/** A fresh, migrated database for one test file: in-memory PGlite, or a new database on the real server. */
export async function openTestStores(opts: TestStoreOptions = {}): Promise<TestStores> {
  if (!realStores) {
    const appDatabase = await openPglite(undefined, { loadDataDir: pgliteTemplate() })
    const traffic: StoreTraffic = { dbRoundTrips: 0, dbStatements: 0, kvRoundTrips: 0 }
    countPglite(appDatabase.client, traffic)
    const memory = new MemoryKv()
    countKv(memory, traffic)
    const kvStore = opts.faults ? new FailingKv(memory) : undefined
    const database: NodeDatabase = { ...appDatabase, db: pgliteServiceView(appDatabase.client) }
    const close = async () => {
      if (!appDatabase.client.closed) await appDatabase.client.close()
    }
    const faults: StoreFaults | undefined = opts.faults ? { kvStore, closeDatabase: close, timeouts: FAULT_TIMEOUTS } : undefined
    return { appDatabase, database, kv: kvStore ?? memory, name: 'pglite+memory', faults, traffic: () => ({ ...traffic }), close }
  }
  const adminUrl = process.env.TEST_DATABASE_URL!
  const dbName = `t_${crypto.randomUUID().replace(/-/g, '').slice(0, 16)}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`create database ${dbName}`)
  const url = new URL(adminUrl)
  url.pathname = `/${dbName}`
  // Migrate over TCP as the owner (the CI role), then serve the app through the production Neon driver over
  // the WebSocket proxy as app_api (trust auth on 127.0.0.1), and the tests as app_test.
  await migratePostgres(url.toString())
  await ensureTestRole(admin)
  const proxy = await acquireNeonProxy()
  const redis = await startUpstashRestServer({ redisUrl: process.env.TEST_REDIS_URL! })
  let faults: StoreFaults | undefined
  let appUrl = asRole(url, APP_LOGIN_ROLE)
  // The REST look-alike is one Node process on a loaded 2-core runner: 200 concurrent scripts can queue past
  // production's 3 s per call there. The fault suites use their own short deadline (FAULT_TIMEOUTS).
  let kv = new UpstashKv(redis.url, redis.token, { timeoutMs: 15_000 })
  if (opts.faults) {
    const database = await startFaultProxy({ target: `${url.hostname}:${url.port || 5432}`, mode: 'tcp' })
    const kvProxy = await startFaultProxy({ target: redis.url, mode: 'http' })
    faults = { database, kv: kvProxy, timeouts: FAULT_TIMEOUTS }
    appUrl = Object.assign(new URL(appUrl), { hostname: database.host, port: String(database.port) }).toString()
    kv = new UpstashKv(kvProxy.url, redis.token, { timeoutMs: FAULT_TIMEOUTS.kvMs })
  }
  const timeouts = opts.faults ? { connectTimeoutMs: FAULT_TIMEOUTS.connectMs, queryTimeoutMs: FAULT_TIMEOUTS.queryMs } : {}
  const app = neonDb(appUrl, timeouts)
  const tests = neonDb(asRole(url, TEST_ROLE))
  return {
    // The production split: single-statement reads over Neon's HTTP endpoint, the rest over its WebSocket.
    appDatabase: { db: app.db, reader: neonReader(appUrl, timeouts), adapter: 'postgres', close: app.close },
    database: { db: tests.db, adapter: 'postgres', close: tests.close },
    kv,
    faults,
    name: 'postgres(neon)+redis(upstash)',
    traffic: () => {
      const db = proxy.traffic()
      return { dbRoundTrips: db.roundTrips, dbStatements: db.statements, kvRoundTrips: redis.requests }
    },
    async close() {
      await faults?.database?.set('pass')
      // Every connection is back in the pool by now, faults or not (lib/db/rls.ts `watchConnection`): a close that
      // hangs here is a connection left checked out.
      await app.close()
      await tests.close()
      await faults?.database?.close()
      await faults?.kv?.close()
      await proxy.endDatabase(dbName)
      await proxy.close()
      await redis.close()
      await admin.query(`drop database if exists ${dbName} with (force)`)
      await admin.end()
    },
  }
}
