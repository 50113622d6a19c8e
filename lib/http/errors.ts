import type { Context, ErrorHandler, NotFoundHandler } from 'hono'
import { HTTPException } from 'hono/http-exception'
import type { ContentfulStatusCode } from 'hono/utils/http-status'

/**
 * The one error type handlers throw. `onError` shapes it into `{error, code?, ...extra}`.
 * `extra` carries the few documented additions (validation `issues`, `retryAfterSeconds`, ...).
 */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
    readonly options: { code?: string; extra?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(message)
    this.name = 'ApiError'
  }

  get code() {
    return this.options.code
  }
}

export const errorBody = (error: string, code?: string, extra?: Record<string, unknown>) => ({
  error,
  ...(code ? { code } : {}),
  ...extra,
})

// hono's json validator throws this exact message for unparsable bodies.
const MALFORMED_JSON = 'Malformed JSON in request body'

export const onError: ErrorHandler = (err, c) => {
  if (err instanceof ApiError) {
    for (const [k, v] of Object.entries(err.options.headers ?? {})) c.header(k, v)
    return c.json(errorBody(err.message, err.code, err.options.extra), err.status)
  }
  if (err instanceof HTTPException) {
    if (err.status === 400 && err.message === MALFORMED_JSON) return c.json(errorBody('Invalid JSON body'), 400)
    if (err.status === 413) return c.json(errorBody('Payload too large'), 413)
    if (err.status < 500) return c.json(errorBody(err.message || 'Bad request'), err.status as ContentfulStatusCode)
  }
  logUnhandled(c, err)
  return c.json(errorBody('Internal server error'), 500)
}

function logUnhandled(c: Context, err: unknown) {
  const requestId = c.get('requestId')
  const detail = err instanceof Error ? (err.stack ?? err.message) : String(err)
  console.error(`[${requestId ?? '-'}] ${c.req.method} ${new URL(c.req.url).pathname} failed: ${detail}`)
}

export const notFound: NotFoundHandler = (c) => c.json(errorBody('Not found'), 404)
