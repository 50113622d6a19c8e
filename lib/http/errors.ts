import type { Context, ErrorHandler, NotFoundHandler } from 'hono'
import { HTTPException } from 'hono/http-exception'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { errorFields, log, sqlState } from '../log'
import type { ErrorCode } from './error-codes'
import { routePattern } from './request-log'

/**
 * The one error type handlers throw. `onError` shapes it into `{error, code, ...extra}`; codes come from the
 * catalogue in ./error-codes.ts.
 * `extra` carries the few documented additions (validation `issues`, `retryAfterSeconds`, ...).
 */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
    readonly options: { code: ErrorCode; extra?: Record<string, unknown>; headers?: Record<string, string> },
  ) {
    super(message)
    this.name = 'ApiError'
  }

  get code() {
    return this.options.code
  }
}

export const errorBody = (error: string, code: ErrorCode, extra?: Record<string, unknown>) => ({ error, code, ...extra })

// hono's json validator throws this exact message for unparsable bodies.
const MALFORMED_JSON = 'Malformed JSON in request body'

/** The code of an HTTPException hono or a middleware raised, by its status. */
const FRAMEWORK_CODES: Record<number, ErrorCode> = {
  400: 'VALIDATION',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
}

export const onError: ErrorHandler = (err, c) => {
  if (err instanceof ApiError) {
    for (const [k, v] of Object.entries(err.options.headers ?? {})) c.header(k, v)
    return c.json(errorBody(err.message, err.code, err.options.extra), err.status)
  }
  if (err instanceof HTTPException) {
    if (err.status === 400 && err.message === MALFORMED_JSON) return c.json(errorBody('Invalid JSON body', 'INVALID_JSON'), 400)
    if (err.status === 413) return c.json(errorBody('Payload too large', 'PAYLOAD_TOO_LARGE'), 413)
    if (err.status < 500) {
      const code = FRAMEWORK_CODES[err.status] ?? 'VALIDATION'
      return c.json(errorBody(err.message || 'Bad request', code), err.status as ContentfulStatusCode)
    }
  }
  const input = inputDatabaseError(sqlState(err))
  if (input) {
    logRequestError(c, 'request.refused_by_database', err, 'warn')
    return c.json(errorBody(input.message, input.code), input.status)
  }
  logRequestError(c, 'request.unhandled_error', err, 'error')
  return c.json(errorBody('Internal server error', 'INTERNAL'), 500)
}

/**
 * Postgres errors a request's input can cause (a NUL byte, a malformed uuid, an out-of-range number, a
 * duplicate): a 4xx with a code, never the SQL or its parameters. Anything else stays a 500.
 */
export function inputDatabaseError(state: string | undefined): { status: 400 | 409; message: string; code: ErrorCode } | undefined {
  if (!state) return undefined
  if (state.startsWith('22')) return { status: 400, message: 'Invalid input', code: 'INVALID_INPUT' }
  if (state === '54000') return { status: 400, message: 'Input too large', code: 'INVALID_INPUT' }
  if (state === '23505' || state === '23P01') return { status: 409, message: 'Already exists', code: 'CONFLICT' }
  if (state === '23503') return { status: 409, message: 'Conflicts with related records', code: 'CONFLICT' }
  if (state === '23502' || state === '23514') return { status: 400, message: 'Invalid input', code: 'INVALID_INPUT' }
  return undefined
}

/** Request ids, method and route pattern as the `request` event has them (never the raw URL, never the body). */
function logRequestError(c: Context, event: string, err: unknown, level: 'warn' | 'error') {
  const { requestId, clientRequestId } = c.var
  log[level](event, { requestId, clientRequestId, method: c.req.method, route: routePattern(c), ...errorFields(err) })
}

export const notFound: NotFoundHandler = (c) => c.json(errorBody('Not found', 'NOT_FOUND'), 404)
