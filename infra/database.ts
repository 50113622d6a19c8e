import { PGlite } from '@electric-sql/pglite'
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres'
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator'
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite'
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator'
import { mkdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { keepsPreparedSelects, PreparedSelectRun } from '../lib/db/prepared'
import type { Db } from '../lib/db/rls'
import * as schema from '../schema'
import {
  APP_ROLE,
  CONNECT_TIMEOUT_MS,
  type DatabaseTimeouts,
  watchConnection,
  QUERY_TIMEOUT_MS,
  type Reader,
  runInOrder,
  runStatements,
  SERVICE_ROLE,
  STATEMENT_TIMEOUT_MS,
  type Statements,
  statementList,
} from '../lib/db/rls'
import { unavailableDependency } from '../lib/http/dependency'
import { errorFields, log } from '../lib/log'
import { is } from 'drizzle-orm'
import { PgSelectBase } from 'drizzle-orm/pg-core'

export const migrationsFolder = fileURLToPath(new URL('../drizzle', import.meta.url))

/**
 * The login role the app serves as (drizzle/0006_rls_binds.sql): it owns nothing and can read nothing itself,
 * only through withUser (app_user) or asService (app_service). Migrations run as the tables' owner.
 */
export const APP_LOGIN_ROLE = 'app_api'

export interface NodeDatabase {
  db: Db
  /** Defaults to `transactionReader(db)`; the integration stores read through Neon's HTTP endpoint. */
  reader?: Reader
  adapter: 'pglite' | 'postgres'
  /** Keeps the tables where no autovacuum does (PGlite: `PgliteDatabase.maintain`). */
  maintain?(): Promise<void>
  close(): Promise<void>
}

export interface PgliteDatabase extends NodeDatabase {
  /** The one PGlite connection, its session now `APP_LOGIN_ROLE` (tests build their own view on it). */
  client: PGlite
  /**
   * VACUUM (ANALYZE): dead rows reclaimed and the planner's statistics refreshed. PGlite runs Postgres without its
   * background workers, so no autovacuum ever does this: without it, a table that grew since its last ANALYZE is
   * planned from defaults (the watchdog's page of due agents at 100k agents: a sort of every agent past the cursor,
   * 120–250 ms a page, instead of an index walk of one page, 16 ms), and every update's old row versions stay (the
   * watchdog rewrites each agent's row every interval). The server runs it at start and every
   * `PGLITE_MAINTENANCE_INTERVAL_MS`.
   */
  maintain(): Promise<void>
}

/** How often the local server keeps PGlite's tables (`PgliteDatabase.maintain`). */
export const PGLITE_MAINTENANCE_INTERVAL_MS = 10 * 60_000

/**
 * PGlite on disk (or in memory when `dataDir` is omitted): migrated as its superuser on every open, then the
 * session continues as `APP_LOGIN_ROLE`, so RESET ROLE inside withUser lands on a role that sees nothing (nor
 * does RESET SESSION AUTHORIZATION lead back to the superuser: tests/db/pglite-maintenance.test.ts).
 */
export async function openPglite(dataDir?: string, opts: { loadDataDir?: Blob } = {}): Promise<PgliteDatabase> {
  if (dataDir) mkdirSync(dataDir, { recursive: true })
  // `loadDataDir`: start from a dump of an already migrated database (the tests' template); migrating
  // again is then a check that finds nothing to apply.
  const client = new PGlite({ dataDir, loadDataDir: opts.loadDataDir })
  const db = drizzlePglite({ client })
  await migratePglite(db, { migrationsFolder })
  // The login role may keep the tables (VACUUM, ANALYZE: `maintain` below), and through no role it sets (NOINHERIT
  // applies to its other grants). pg_maintain reads and writes no row; it could take a table lock, which only SQL the
  // app does not run would ask for.
  await client.exec(`grant pg_maintain to ${APP_LOGIN_ROLE} with inherit true; set session authorization ${APP_LOGIN_ROLE}`)
  const maintain = () => client.exec('vacuum (analyze)').then(() => {})
  return { db: db as unknown as Db, reader: pgliteReader(client), adapter: 'pglite', client, maintain, close: () => client.close() }
}

/** Applies drizzle/ to the database at `url`, connected as the role in it (the tables' owner). */
export async function migratePostgres(url: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: url, max: 1 })
  try {
    await migratePg(drizzlePg({ client: pool, schema }), { migrationsFolder })
  } finally {
    await pool.end()
  }
}

/**
 * Any Postgres by URL through node-postgres (the local server with DATABASE_URL). Migrates first, as
 * `migrationUrl` (the owner) when given, else as `url`; then serves as `url`'s role, which should be app_api.
 */
export async function openPostgres(url: string, opts: { migrate?: boolean; migrationUrl?: string } & DatabaseTimeouts = {}): Promise<NodeDatabase> {
  if (opts.migrate !== false) await migratePostgres(opts.migrationUrl ?? url)
  // Bounded: connecting, each statement on the server (also set per transaction, lib/db/rls.ts), and each answer.
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    connectionTimeoutMillis: opts.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
    statement_timeout: STATEMENT_TIMEOUT_MS,
    query_timeout: opts.queryTimeoutMs ?? QUERY_TIMEOUT_MS,
  })
  pool.on('connect', watchConnection)
  // An idle connection the server ends (restart, failover, a dropped database) is reported here; without a
  // listener node-postgres would throw it out of the process. The pool replaces it on the next checkout.
  pool.on('error', (e) => log.warn('db.idle_connection_lost', errorFields(e)))
  const db = drizzlePg({ client: pool })
  return { db: db as unknown as Db, reader: pgReader(pool), adapter: 'postgres', close: () => pool.end() }
}

// Ids are inlined into the settings query (a simple query takes no parameters): only a uuid, the shape the app's
// user ids have (schema/users.ts), is accepted.
const USER_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** The row-isolation settings as one simple query, the id inlined (checked against `USER_ID`). */
const userSettingsQuery = (userId: string) => {
  if (!USER_ID.test(userId)) throw new Error('unexpected user id shape')
  return `select set_config('app.user_id', '${userId}', true), set_config('role', '${APP_ROLE}', true)`
}
const serviceSettingsQuery = `select set_config('role', '${SERVICE_ROLE}', true)`

/**
 * PGlite's `Reader`: one transaction whose settings go through the simple-query path, which PGlite runs several
 * times faster than a parameterised query (measured: 0.05 ms against 0.34 ms for `select 1`). The per-transaction
 * drizzle handle gets no `schema`: building its relational config costs ~1 ms a call (measured), and statements
 * built here use no relational queries.
 */
export function pgliteReader(client: PGlite): Reader {
  const run = <T>(settings: string, build: (db: Db) => Statements<T>) =>
    client.transaction(async (tx) => {
      await tx.exec(settings)
      return runInOrder(drizzlePglite({ client: tx as unknown as PGlite }) as unknown as Db, build)
    })
  return {
    asUser: async (userId, build) => run(userSettingsQuery(userId), build),
    asService: async (_purpose, build) => run(serviceSettingsQuery, build),
  }
}

/**
 * A parameter of a drizzle statement as a SQL literal, the way node-postgres would have sent it (text, type left
 * to the server): strings quoted by `pg.escapeLiteral`, numbers, bigints and booleans quoted, null as NULL.
 * Anything else (a NUL in a string, which would end a simple query early; a buffer, an array, an object) answers
 * undefined: that statement is sent with its parameters instead.
 */
function literal(value: unknown): string | undefined {
  if (value === null || value === undefined) return 'null'
  if (typeof value === 'string') return value.includes('\0') ? undefined : pg.escapeLiteral(value)
  if ((typeof value === 'number' && Number.isFinite(value)) || typeof value === 'bigint' || typeof value === 'boolean') return `'${String(value)}'`
  return undefined
}

/**
 * `text` with each `$n` outside quotes replaced by `params[n - 1]` as a literal; undefined when a parameter cannot
 * be a literal or the text has what this scan does not read (a backslash, dollar quoting, an unclosed quote).
 */
export function inlineParameters(text: string, params: readonly unknown[]): string | undefined {
  if (text.includes('\\')) return undefined
  const literals = params.map(literal)
  let out = ''
  for (let i = 0; i < text.length; ) {
    const ch = text[i]
    if (ch === "'" || ch === '"') {
      const end = text.indexOf(ch, i + 1)
      if (end < 0) return undefined
      out += text.slice(i, end + 1)
      i = end + 1
    } else if (ch === '$') {
      const n = /^\$([1-9]\d*)/.exec(text.slice(i, i + 12))
      const value = n ? literals[Number(n[1]) - 1] : undefined
      if (!n || value === undefined) return undefined
      out += value
      i += n[0].length
    } else {
      out += ch
      i++
    }
  }
  return out
}

interface PgQueryConfig {
  text: string
  name?: string
  rowMode?: 'array'
  types?: unknown
}

/** A pooled connection's one drizzle handle, and the transaction it serves now (one at a time). */
interface Connection {
  db: Db
  /** The transaction's row-isolation settings, sent with its BEGIN. */
  settings: string
  /** A lone select: sent with BEGIN, the settings and COMMIT as one simple query. */
  oneTrip: boolean
  committed: boolean
}

/**
 * node-postgres cannot pipeline. A read of one select goes as one simple query, one round trip: BEGIN READ ONLY,
 * the row-isolation settings, the select with its parameters inlined as literals (`inlineParameters`), COMMIT;
 * the connection goes back to the pool with its answer. Otherwise BEGIN and the settings go as one simple query,
 * then the statements, then COMMIT (when every statement is a select, the answer is returned before the COMMIT,
 * which finishes before the connection goes back to the pool): two round trips on the request's path.
 *
 * Each pooled connection keeps one drizzle handle (it serves one transaction at a time), so the selects prepared on
 * it (lib/db/prepared.ts) are built once per connection rather than once per request.
 */
export function pgReader(pool: pg.Pool): Reader {
  const connections = new WeakMap<pg.PoolClient, Connection>()
  function connectionOf(client: pg.PoolClient): Connection {
    let conn = connections.get(client)
    if (conn) return conn
    const self: Connection = { db: undefined as unknown as Db, settings: '', oneTrip: false, committed: false }
    // drizzle sends through `via`: straight to the connection, or, for a lone select, the whole transaction at once.
    const via = {
      query: async (config: PgQueryConfig, params: unknown[] = []) => {
        if (!self.oneTrip) return client.query(config as pg.QueryConfig, params)
        const text = config.name ? undefined : inlineParameters(config.text, params)
        if (text === undefined) {
          await client.query(`begin read only; ${self.settings}`)
          return client.query(config as pg.QueryConfig, params)
        }
        const results = (await client.query({ ...config, text: `begin read only; ${self.settings}; ${text}; commit` } as pg.QueryConfig)) as unknown as pg.QueryResult[]
        self.committed = true
        return results[2]
      },
    }
    self.db = keepsPreparedSelects(drizzlePg({ client: via as unknown as pg.Pool }) as unknown as Db)
    connections.set(client, (conn = self))
    return conn
  }

  async function run<T>(settings: string, build: (db: Db) => Statements<T>): Promise<T> {
    const client = await pool.connect()
    const conn = connectionOf(client)
    Object.assign(conn, { settings, oneTrip: false, committed: false })
    let finished = false
    const finish = async (sql: 'commit' | 'rollback') => {
      finished = true
      try {
        await client.query(sql)
        client.release()
      } catch (e) {
        client.release(e as Error) // a broken connection is dropped, not reused
        if (sql === 'commit') throw e
      }
    }
    try {
      const statements = statementList(build(conn.db))
      const readOnly = statements.every((st) => st instanceof PreparedSelectRun || is(st, PgSelectBase))
      if (readOnly && statements.length === 1) conn.oneTrip = true
      else await client.query(`begin${readOnly ? ' read only' : ''}; ${settings}`)
      const last = await runStatements<T>(statements)
      if (conn.committed) {
        finished = true
        client.release()
        return last
      }
      const commit = finish('commit')
      if (!readOnly) await commit
      else commit.catch((e) => log.error('db.read_commit_failed', errorFields(e)))
      return last
    } catch (e) {
      if (!finished && unavailableDependency(e)) {
        // The connection itself failed (or stopped answering): a ROLLBACK would wait out another timeout on it.
        finished = true
        client.release(e as Error)
      } else if (!finished) await finish('rollback')
      throw e
    }
  }
  return {
    asUser: async (userId, build) => run(userSettingsQuery(userId), build),
    asService: async (_purpose, build) => run(serviceSettingsQuery, build),
  }
}
