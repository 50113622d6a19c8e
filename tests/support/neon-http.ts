import type { IncomingMessage, ServerResponse } from 'node:http'
import pg from 'pg'
import type { NeonTraffic } from './neon-proxy'

/**
 * Neon's SQL-over-HTTP endpoint, as @neondatabase/serverless 1.x speaks it, in front of a real Postgres (tests
 * only; Neon's proxy has no local build). `POST /sql` with `Neon-Connection-String`; body `{query, params}` or,
 * for a transaction, `{queries: [...]}` run in one transaction (`Neon-Batch-Isolation-Level`,
 * `Neon-Batch-Read-Only`). Answers rows as arrays of Postgres text (`Neon-Raw-Text-Output`, `Neon-Array-Mode`),
 * with `fields` carrying type oids so the driver parses them; errors are 400 with the Postgres error's fields.
 */
export interface SqlOverHttp {
  pools: Map<string, pg.Pool>
  traffic: NeonTraffic
}

interface Query {
  query: string
  params?: unknown[]
}

const rawText = { getTypeParser: () => (value: string) => value }
const ISOLATION: Record<string, string> = {
  Serializable: 'serializable',
  RepeatableRead: 'repeatable read',
  ReadCommitted: 'read committed',
  ReadUncommitted: 'read uncommitted',
}
// The fields of a Postgres error the driver copies onto its NeonDbError.
const ERROR_FIELDS = ['severity', 'code', 'detail', 'hint', 'position', 'internalPosition', 'internalQuery', 'where', 'schema', 'table', 'column', 'dataType', 'constraint', 'file', 'line', 'routine'] as const

async function readBody(req: IncomingMessage) {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Query & { queries?: Query[] }
}

async function run(client: pg.PoolClient, q: Query) {
  const result = await client.query({ text: q.query, values: q.params ?? [], rowMode: 'array', types: rawText })
  return {
    command: result.command,
    rowCount: result.rowCount,
    rows: result.rows,
    fields: result.fields.map((f) => ({ name: f.name, dataTypeID: f.dataTypeID, tableID: f.tableID, columnID: f.columnID, dataTypeSize: f.dataTypeSize, dataTypeModifier: f.dataTypeModifier, format: 'text' })),
    rowAsArray: true,
  }
}

export async function handleSqlOverHttp(state: SqlOverHttp, req: IncomingMessage, res: ServerResponse) {
  const send = (status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
  }
  const url = req.headers['neon-connection-string']
  if (req.method !== 'POST' || req.url !== '/sql' || typeof url !== 'string') return send(404, { message: 'expected POST /sql with Neon-Connection-String' })
  state.traffic.roundTrips++
  let pool = state.pools.get(url)
  if (!pool) {
    pool = new pg.Pool({ connectionString: url, max: 10, options: '-c TimeZone=UTC', connectionTimeoutMillis: 2000 })
    // An idle connection ended by the server (a test database dropped WITH (FORCE)) is not a failure.
    pool.on('error', () => {})
    // Nor is a connection cut while checked out (the fault proxy resets it): its query fails, which is the answer.
    pool.on('connect', (client) => client.on('error', () => {}))
    state.pools.set(url, pool)
  }
  const body = await readBody(req)
  let client: pg.PoolClient
  try {
    client = await pool.connect()
  } catch (e) {
    // Postgres not reached: Neon's endpoint answers a server error (the driver throws `Server error (HTTP status …)`).
    if (!res.headersSent && !res.destroyed) res.writeHead(503, { 'content-type': 'text/plain' }).end(`could not connect to the database: ${(e as Error).message}`)
    return
  }
  try {
    if (!body.queries) {
      state.traffic.statements++
      return send(200, await run(client, body))
    }
    const isolation = ISOLATION[String(req.headers['neon-batch-isolation-level'])] ?? 'read committed'
    const readOnly = req.headers['neon-batch-read-only'] === 'true' ? ' read only' : ''
    state.traffic.statements += body.queries.length
    await client.query(`begin isolation level ${isolation}${readOnly}`)
    try {
      const results = []
      for (const q of body.queries) results.push(await run(client, q))
      await client.query('commit')
      return send(200, { results })
    } catch (e) {
      await client.query('rollback')
      throw e
    }
  } catch (e) {
    const err = e as Record<string, unknown> & { message?: string }
    send(400, { message: err.message ?? String(e), ...Object.fromEntries(ERROR_FIELDS.map((k) => [k, err[k]])) })
  } finally {
    client.release()
  }
}
