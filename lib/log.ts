/**
 * The one way to log: one JSON object per line on the console, which Workers Logs (and any line-based
 * collector) reads as one event. Every value goes through JSON.stringify, so a newline or a quote from a
 * request can never start a second, forged line. Fields whose names say they hold a secret are dropped.
 */
type Level = 'debug' | 'info' | 'warn' | 'error'
export type LogFields = Record<string, unknown>

// Names of fields that would carry a credential or a hash: never written, whoever passes them.
const SECRET_FIELD = /password|passphrase|secret|token|hash|cookie|authorization|signature|api_?key|credential/i
const MAX_STRING = 2000

/** JSON.stringify leaves U+2028/U+2029 raw; some viewers break lines on them. */
const escapeSeparators = (line: string) => line.replace(/[\u2028\u2029]/g, (ch) => (ch === '\u2028' ? '\\u2028' : '\\u2029'))

function clean(fields: LogFields): LogFields {
  const out: LogFields = {}
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined || SECRET_FIELD.test(k)) continue
    out[k] = typeof v === 'string' && v.length > MAX_STRING ? `${v.slice(0, MAX_STRING)}…` : v
  }
  return out
}

/** Serialises one event; exported for tests. Values JSON cannot hold (bigint, cycles) become a note. */
export function formatEvent(level: Level, event: string, fields: LogFields = {}): string {
  const record = { level, event, time: new Date().toISOString(), ...clean(fields) }
  let line: string
  try {
    line = JSON.stringify(record, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))
  } catch {
    line = JSON.stringify({ level, event, time: record.time, note: 'fields not serialisable' })
  }
  return escapeSeparators(line)
}

const write = (level: Level, event: string, fields?: LogFields) => {
  const line = formatEvent(level, event, fields)
  if (level === 'error') console.error(line)
  else if (level === 'warn') console.warn(line)
  else if (level === 'info') console.info(line)
  else console.debug(line)
}

export const log = {
  debug: (event: string, fields?: LogFields) => write('debug', event, fields),
  info: (event: string, fields?: LogFields) => write('info', event, fields),
  warn: (event: string, fields?: LogFields) => write('warn', event, fields),
  error: (event: string, fields?: LogFields) => write('error', event, fields),
}

/** The SQLSTATE of a database error, looked up through drizzle's wrapping (`cause`). */
export function sqlState(err: unknown): string | undefined {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code
  }
  return undefined
}

// drizzle's DrizzleQueryError message is `Failed query: <sql>\nparams: <values>`.
const isDatabaseError = (err: unknown) =>
  sqlState(err) !== undefined || (err instanceof Error && (err.name === 'DrizzleQueryError' || err.message.startsWith('Failed query')))

/** viem's `shortMessage` leaves out the request and RPC URL; any URL keeps neither credentials nor query. */
function safeMessage(err: Error) {
  const short = (err as { shortMessage?: unknown }).shortMessage
  const text = typeof short === 'string' ? short : err.message
  return text.replace(/\b(https?:\/\/)[^\s/@]*@/g, '$1').replace(/(https?:\/\/[^\s?#]*)[?#]\S*/g, '$1')
}

/**
 * What an event may say about an error: its name and SQLSTATE, and its message only when it is not a
 * database error (whose message carries the SQL and its parameters, e.g. a new user's password hash).
 */
export function errorFields(err: unknown): LogFields {
  if (!(err instanceof Error)) return { errorName: typeof err, ...(isDatabaseError(err) ? {} : { errorMessage: String(err) }) }
  const frames = (err.stack ?? '').split('\n').filter((l) => l.trimStart().startsWith('at ')).slice(0, 6).map((l) => l.trim())
  return {
    errorName: err.name,
    sqlstate: sqlState(err),
    ...(isDatabaseError(err) ? {} : { errorMessage: safeMessage(err) }),
    ...(frames.length ? { stack: frames } : {}),
  }
}
