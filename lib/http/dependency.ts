/**
 * A store the request needs did not answer: the database (Postgres through node-postgres or the Neon driver,
 * PGlite), the kv store (Upstash REST) or the job queue (QStash). `onError` (./errors.ts) is the one place that turns
 * such a failure into 503 `DATABASE_UNAVAILABLE` / `KV_UNAVAILABLE` or 502 `QUEUE_UNAVAILABLE`, with `Retry-After`;
 * see README "When a dependency fails".
 */
export type Dependency = 'database' | 'kv' | 'queue'

/** What an adapter throws when its store failed the call (not when the call itself was wrong). */
export class DependencyUnavailableError extends Error {
  override name = 'DependencyUnavailableError'
  constructor(
    readonly dependency: Dependency,
    options?: { cause?: unknown },
  ) {
    super(`${dependency} unavailable`, options)
  }
}

// Socket errors of a database driver (node-postgres, the Neon driver over its WebSocket). Only outside a failed
// `fetch` (whose cause carries the same codes): an unhandled upstream call is not the database.
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH'])
// node-postgres and its Neon fork (connection lost, connect or read timeout, a closed pool), the Neon HTTP
// endpoint not reached or failing (5xx), the ws WebSocket the driver runs on, PGlite closed.
const DRIVER_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Cannot use a pool after calling end|Client was closed|Error connecting to database|Server error \(HTTP status 5\d\d\)|WebSocket was closed|PGlite is clos(ed|ing))/
/** SQLSTATEs that say the server cannot serve now: connection exceptions, shutdown, too many connections, a statement timeout. */
const UNAVAILABLE_STATE = /^(08...|57P0[123]|57014|53300)$/

/**
 * The store a thrown error says is down, or undefined for anything else (a genuine bug stays a 500). Looks through
 * drizzle's wrapping (`cause`) and the Neon HTTP error's `sourceError`.
 */
export function unavailableDependency(err: unknown): Dependency | undefined {
  let fetchFailure = false
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 6; depth++) {
    if (e instanceof DependencyUnavailableError) return e.dependency
    const { code, message, name } = e as { code?: unknown; message?: unknown; name?: unknown }
    if (name === 'TypeError' && message === 'fetch failed') fetchFailure = true
    if (typeof code === 'string' && (UNAVAILABLE_STATE.test(code) || (!fetchFailure && NETWORK_CODES.has(code)))) return 'database'
    if (typeof message === 'string' && DRIVER_MESSAGES.test(message)) return 'database'
    e = (e as { cause?: unknown }).cause ?? (e as { sourceError?: unknown }).sourceError
  }
  return undefined
}

/** Seconds a client is told to wait before retrying a request a store could not serve. */
export const DEPENDENCY_RETRY_AFTER_SEC = 5
