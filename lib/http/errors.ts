import type { Context, ErrorHandler, NotFoundHandler } from 'hono'
import { HTTPException } from 'hono/http-exception'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { errorFields, log, sqlState } from '../log'
import { ERRORS, type ErrorCode } from './error-codes'
import { routePattern } from './request-log'

/** What a throw may add to its code: the text (`error`, or `message` for an exact code), documented extra fields, headers. */
export interface ApiErrorOptions {
  message?: string
  extra?: Record<string, unknown>
  headers?: Record<string, string>
}

/**
 * The one error type code throws: `new ApiError('NOT_FOUND', 'Skill not found')`. The code decides the status and
 * the default text (./error-codes.ts); `onError` shapes it into `{error, code, ...extra}` (for an exact code,
 * `{error: '<the spec's string>', code, message, ...extra}`).
 */
export class ApiError extends Error {
  readonly status: ContentfulStatusCode
  readonly extra?: Record<string, unknown>
  readonly headers?: Record<string, string>

  constructor(
    readonly code: ErrorCode,
    options: string | ApiErrorOptions = {},
  ) {
    const { message, extra, headers } = typeof options === 'string' ? { message: options } : options
    const [status, error, form] = ERRORS[code] as readonly [ContentfulStatusCode, string, 'exact'?]
    super(form === 'exact' ? error : (message ?? error))
    this.name = 'ApiError'
    this.status = status
    this.extra = form === 'exact' && message !== undefined ? { message, ...extra } : extra
    this.headers = headers
  }
}

const errorBody = (error: string, code: ErrorCode, extra?: Record<string, unknown>) => ({ error, code, ...extra })

/** The answer for `code` outside a throw (a Durable Object, the not-found handler): the catalogue's status and text. */
export const answerError = (code: ErrorCode, message?: string, extra?: Record<string, unknown>) => {
  const e = new ApiError(code, { message, extra })
  return Response.json(errorBody(e.message, code, e.extra), { status: e.status })
}

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

export const onError: ErrorHandler = (err, c) => renderError(c, asApiError(err, c))

/** An error's answer on `c` (so the headers set on it, CORS and request id, stay). */
export function renderError(c: Context, e: ApiError) {
  // A 402 answers for one caller at one moment (a single-use challenge, a balance): no cache may replay it.
  if (e.status === 402) c.header('Cache-Control', 'no-store')
  for (const [k, v] of Object.entries(e.headers ?? {})) c.header(k, v)
  return c.json(errorBody(e.message, e.code, e.extra), e.status)
}

/** Whatever was thrown, as the catalogue's answer: the framework's 4xx by status, input the database refused, else INTERNAL (logged). */
function asApiError(err: unknown, c: Context): ApiError {
  if (err instanceof ApiError) return err
  if (err instanceof HTTPException && err.status < 500) {
    if (err.status === 400 && err.message === MALFORMED_JSON) return new ApiError('INVALID_JSON')
    if (err.status === 413) return new ApiError('PAYLOAD_TOO_LARGE')
    return new ApiError(FRAMEWORK_CODES[err.status] ?? 'VALIDATION', err.message || 'Bad request')
  }
  const input = inputDatabaseError(sqlState(err))
  if (input) {
    logRequestError(c, 'request.refused_by_database', err, 'warn')
    return input
  }
  logRequestError(c, 'request.unhandled_error', err, 'error')
  return new ApiError('INTERNAL')
}

/**
 * Postgres errors a request's input can cause (a NUL byte, a malformed uuid, an out-of-range number, a
 * duplicate): a 4xx with a code, never the SQL or its parameters. Anything else stays a 500.
 */
function inputDatabaseError(state: string | undefined): ApiError | undefined {
  if (!state) return undefined
  if (state.startsWith('22') || state === '23502' || state === '23514') return new ApiError('INVALID_INPUT')
  if (state === '54000') return new ApiError('INVALID_INPUT', 'Input too large')
  if (state === '23505' || state === '23P01') return new ApiError('CONFLICT')
  if (state === '23503') return new ApiError('CONFLICT', 'Conflicts with related records')
  return undefined
}

/** Request ids, method and route pattern as the `request` event has them (never the raw URL, never the body). */
function logRequestError(c: Context, event: string, err: unknown, level: 'warn' | 'error') {
  const { requestId, clientRequestId } = c.var
  log[level](event, { requestId, clientRequestId, method: c.req.method, route: routePattern(c), ...errorFields(err) })
}

export const notFound: NotFoundHandler = (c) => renderError(c, new ApiError('NOT_FOUND'))
