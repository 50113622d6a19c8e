import type { Context, ErrorHandler, NotFoundHandler } from 'hono'
import { HTTPException } from 'hono/http-exception'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { errorFields, log, sqlState } from '../log'
import { DEPENDENCY_RETRY_AFTER_SEC, type Dependency, unavailableDependency } from './dependency'
import { routePattern } from './request-log'

/**
 * The one catalogue of error answers: each `code` decides its HTTP status and its default `error` text. Code
 * throws by code (`new ApiError('NOT_FOUND', 'Skill not found')`); nothing else picks a status. What each code
 * means, for the OpenAPI documents, is in ./error-catalogue.ts (kept out of the functions' bundles).
 *
 * Codes are stable, upper snake case, and name the case, not the status (a client switches on `code`, shows
 * `error`). A case the spec answers with another status is another code. Never rename one that has shipped.
 *
 * `exact`: the spec fixes the `error` string itself (the gateway's lower-case codes, `install_failed`); a thrown
 * text then goes to `message` beside it, as the spec's envelope has it.
 */
type Entry = readonly [status: ContentfulStatusCode, error: string, form?: 'exact']

export const ERRORS = {
  // Request shape (any route)
  VALIDATION: [400, 'Invalid request'],
  INVALID_JSON: [400, 'Invalid JSON body'],
  INVALID_INPUT: [400, 'Invalid input'],
  PAYLOAD_TOO_LARGE: [413, 'Payload too large'],
  UNSUPPORTED_MEDIA_TYPE: [415, 'Unsupported media type'],
  INVALID_HOST: [400, 'Invalid Host'],
  NOT_FOUND: [404, 'Not found'],
  METHOD_NOT_ALLOWED: [405, 'Method not allowed'],
  CONFLICT: [409, 'Already exists'],
  RATE_LIMITED: [429, 'Too many requests'],
  INTERNAL: [500, 'Internal server error'],
  NOT_CONFIGURED: [503, 'Not configured'],
  MISCONFIGURED: [500, 'Server misconfigured'],

  // Authentication and authorization
  UNAUTHORIZED: [401, 'Unauthorized'],
  INVALID_CREDENTIALS: [401, 'Invalid credentials'],
  INVALID_API_KEY: [401, 'Invalid API key'],
  API_KEY_REQUIRED: [401, 'API key required'],
  INVALID_TOKEN: [401, 'Invalid or expired token'],
  INVALID_VERIFICATION_TOKEN: [400, 'Invalid or expired verification token'],
  INVALID_SECURITY_EVENT: [400, 'Invalid security event token'],
  INVALID_SIGNATURE: [401, 'Invalid signature'],
  WEBHOOK_SIGNATURE_INVALID: [400, 'Invalid signature'],
  SIGNATURE_REQUIRED: [401, 'Signature required'],
  FORBIDDEN: [403, 'Forbidden'],
  ORIGIN_NOT_ALLOWED: [403, 'Forbidden origin'],
  CSRF_INVALID: [403, 'Invalid or missing CSRF token'],
  ADMIN_REQUIRED: [403, 'Admin access required'],
  REAUTH_REQUIRED: [403, 'Sign in again'],
  BOT_DETECTED: [403, 'Bot detected'],
  RESERVED_EMAIL_DOMAIN: [400, 'This address is reserved for wallet and Farcaster sign-in'],
  ACCOUNT_LINK_REFUSED: [409, 'An account with this email already exists: sign in to it another way'],
  ACCOUNT_DISABLED: [403, 'Sign-in disabled for this account'],
  TOKEN_GATE: [403, 'Token holding required'],

  // Accounts
  USER_EXISTS: [409, 'User already exists'],
  USER_NOT_FOUND: [404, 'User not found'],
  CURRENT_PASSWORD_INCORRECT: [400, 'Current password is incorrect'],
  INVALID_RESET_TOKEN: [400, 'Invalid or expired reset token'],
  EMAIL_ALREADY_VERIFIED: [409, 'Email already verified'],
  INVALID_REFERRAL: [400, 'Invalid referral code'],

  // Invites
  INVALID_INVITE: [400, 'Invalid invite token'],
  INVITE_EMAIL_MISMATCH: [403, 'Invite is for another email'],
  INVITE_USED: [410, 'Invite already used'],
  INVITE_EXPIRED: [410, 'Invite expired'],

  // API keys, passkeys, wallets, devices
  KEY_LIMIT: [429, 'API key limit reached'],
  PASSKEY_EXISTS: [400, 'Passkey already registered'],
  PASSKEY_VERIFICATION_FAILED: [400, 'Passkey verification failed'],
  PASSKEY_AUTH_FAILED: [401, 'Passkey sign-in failed'],
  CHALLENGE_INVALID: [400, 'Invalid or expired challenge'],
  CHALLENGE_MISMATCH: [400, 'Challenge does not match the credential'],
  // Wallet sign-in and wallet proofs (SIWE and Tempo messages)
  NONCE_INVALID: [401, 'Invalid or expired nonce'],
  SIGNATURE_INVALID: [401, 'Invalid signature'],
  ADDRESS_MISMATCH: [401, 'Message address does not match'],
  DOMAIN_MISMATCH: [401, 'Message domain does not match'],
  URI_MISMATCH: [401, 'Message URI does not match'],
  CHAIN_MISMATCH: [401, 'Message chain does not match'],
  MESSAGE_EXPIRED: [401, 'Message has expired'],
  MESSAGE_NOT_YET_VALID: [401, 'Message is not yet valid'],
  MESSAGE_MALFORMED: [400, 'Malformed sign-in message'],
  ADDRESS_NOT_PROVEN: [403, 'Address ownership not proven'],
  INVALID_TRANSITION: [409, 'Not allowed in the current state'],
  INVALID_DEVICE_STATE: [400, 'Device is not in a state that allows this action'],

  // Plans
  PLAN_REQUIRED: [402, 'Paid plan required'],
  SUBSCRIPTION_REQUIRED: [403, 'Active subscription required'],
  PLAN_EXCEEDED: [403, 'Above your plan'],
  SUBSCRIPTION_MISMATCH: [402, 'Subscription mismatch'],
  DEPRECATED: [410, 'Gone'],

  // Upstreams
  CHAIN_UNAVAILABLE: [503, 'Chain unavailable'],
  PROVIDER_UNAVAILABLE: [503, 'Provider unavailable'],
  RUNTIME_UNAVAILABLE: [502, 'Runtime provider unavailable'],
  MAIL_UNAVAILABLE: [503, 'Mail provider unavailable'],
  BACKEND_UNAVAILABLE: [502, 'Backend unavailable'],
  DATABASE_UNAVAILABLE: [503, 'Database unavailable'],
  KV_UNAVAILABLE: [503, 'Key-value store unavailable'],
  USAGE_LIMIT: [429, 'Daily usage limit reached'],
  INVALID_ACTION: [400, 'Invalid action'],
  PAYMENT_INCOMPLETE: [402, 'Payment not completed'],
  PAYMENT_PROVIDER_UNAVAILABLE: [500, 'Payment provider unavailable'],
  AGENT_LIMIT: [429, 'Agent limit reached'],
  PROVISIONING_DISABLED: [500, 'Provisioning is disabled'],
  PROVISIONING_PAUSED: [503, 'Provisioning is temporarily paused'],
  NOT_CONNECTED: [401, 'Calendar not connected'],

  // Gateway (spec 2 "Gateway": the `error` string is the spec's lower-case code, exact)
  UNKNOWN_PLUGIN: [400, 'unknown_plugin', 'exact'],
  PAYMENT_REQUIRED: [402, 'payment_required', 'exact'],
  SESSION_REQUIRED: [402, 'session_required', 'exact'],
  SESSION_INVALID: [402, 'session_invalid', 'exact'],
  INSUFFICIENT_BALANCE: [402, 'insufficient_balance', 'exact'],
  VOUCHER_FAILED: [402, 'voucher_failed', 'exact'],
  NO_PLUGIN: [502, 'no_plugin', 'exact'],
  GATEWAY_INTERNAL: [500, 'internal', 'exact'],
  // Chat jobs
  WORKLOAD_LIMIT: [429, 'Too many chats in progress'],
  QUEUE_UNAVAILABLE: [502, 'Queue unavailable'],
  NO_GATEWAY_TOKEN: [503, 'No gateway token available'],
  ALREADY_CLAIMED: [409, 'Job already claimed'],
  LEASE_LOST: [409, 'Lease expired or not held'],
  ALREADY_DECIDED: [409, 'Permission request already decided'],
  PERMISSION_EXPIRED: [410, 'Permission request expired'],

  // Social posts (spec 2 "Limits")
  POST_LIMIT: [429, 'Daily post limit reached'],
  DUPLICATE_POST: [429, 'Duplicate post'],
  POST_TOO_LONG: [400, 'Post too long'],
  URLS_NOT_ALLOWED: [403, 'Agents under 24 hours old may not post links'],
  // Payment sessions (`/api/wallet/sessions`)
  DEPOSIT_INVALID: [402, 'Deposit refused'],
  DEPOSIT_USED: [409, 'This transaction has already been used'],
  UPGRADE_REQUIRED: [426, 'Upgrade Required'],
  // DJ radio
  SMART_WALLET_REQUIRED: [403, 'A smart wallet is required'],
  FEE_REQUIRED: [402, 'Session fee required'],
  PAYMENT_REJECTED: [402, 'Payment rejected'],
  PAYMENT_ALREADY_USED: [409, 'This transaction has already been used'],
  SESSION_ACTIVE: [409, 'This wallet already has an active session'],
  SESSION_ENDED: [409, 'Session already ended'],
  STREAMING_UNAVAILABLE: [503, 'Streaming provider unavailable'],
  // Skills (spec 2 "Skills": `install_failed` is exact, as the `error` string)
  SKILL_BLOCKED: [400, 'Skill blocked by the safety scan'],
  SKILL_LIMIT: [400, 'Skill limit reached'],
  SKILL_NAME_TAKEN: [400, 'A skill with this name already exists'],
  INSTALL_FAILED: [500, 'install_failed', 'exact'],
  // Wallet
  WALLET_EXISTS: [400, 'Wallet already exists'],
  WALLET_PROVIDER_UNAVAILABLE: [503, 'Wallet provider unavailable'],
  // Files
  STORAGE_LIMIT: [413, 'Storage limit exceeded'],
  MALFORMED_MULTIPART: [400, 'Malformed multipart body'],
  PATH_OUTSIDE_UPLOADS: [403, 'Path outside upload directory'],
  STORAGE_UNAVAILABLE: [502, 'Storage unavailable'],

  // Secrets at rest (lib/secret-box.ts): a sealed value the server's keys no longer open
  SECRET_UNREADABLE: [409, "The agent's gateway token cannot be read with this server's keys: repair the agent to give it a new token, or delete it"],
} as const satisfies Record<string, Entry>

export type ErrorCode = keyof typeof ERRORS
export const ERROR_CODES = Object.keys(ERRORS) as [ErrorCode, ...ErrorCode[]]
export type ErrorStatus<C extends ErrorCode> = (typeof ERRORS)[C][0]

/** What a throw may add to its code: the text (`error`, or `message` for an exact code), documented extra fields, headers. */
export interface ApiErrorOptions {
  message?: string
  extra?: Record<string, unknown>
  headers?: Record<string, string>
}

/**
 * The one error type code throws: `new ApiError('NOT_FOUND', 'Skill not found')`. The code decides the status and
 * the default text (`ERRORS` above); `onError` shapes it into `{error, code, ...extra}` (for an exact code,
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

/**
 * A REST peer (Mux, Google, CDP, a runtime) that did not answer, refused or failed, as its catalogue code: a 503
 * carries `Retry-After` (the stores' `DEPENDENCY_RETRY_AFTER_SEC`), so a client waits as it does for the database.
 */
export const peerUnavailable = (code: ErrorCode, message?: string) =>
  new ApiError(code, { message, headers: ERRORS[code][0] === 503 ? { 'Retry-After': String(DEPENDENCY_RETRY_AFTER_SEC) } : undefined })

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

const UNAVAILABLE_CODE = { database: 'DATABASE_UNAVAILABLE', kv: 'KV_UNAVAILABLE', queue: 'QUEUE_UNAVAILABLE' } as const satisfies Record<Dependency, ErrorCode>

export const onError: ErrorHandler = (err, c) => renderError(c, asApiError(err, c))

/** An error's answer on `c` (so the headers set on it, CORS and request id, stay). */
export function renderError(c: Context, e: ApiError) {
  // A 402 answers for one caller at one moment (a single-use challenge, a balance): no cache may replay it.
  if (e.status === 402) c.header('Cache-Control', 'no-store')
  for (const [k, v] of Object.entries(e.headers ?? {})) c.header(k, v)
  return c.json(errorBody(e.message, e.code, e.extra), e.status)
}

/**
 * Whatever was thrown, as the catalogue's answer: the framework's 4xx by status, a store that did not answer (503
 * with `Retry-After`, logged as `dependency.unavailable`), input the database refused, else INTERNAL (logged).
 */
function asApiError(err: unknown, c: Context): ApiError {
  if (err instanceof ApiError) return err
  if (err instanceof HTTPException && err.status < 500) {
    if (err.status === 400 && err.message === MALFORMED_JSON) return new ApiError('INVALID_JSON')
    if (err.status === 413) return new ApiError('PAYLOAD_TOO_LARGE')
    return new ApiError(FRAMEWORK_CODES[err.status] ?? 'VALIDATION', err.message || 'Bad request')
  }
  const dependency = unavailableDependency(err)
  if (dependency) {
    const { requestId, clientRequestId } = c.var
    // Never the message: a driver's names the host, and a database error's the SQL.
    const cause = rootCause(err)
    log.warn('dependency.unavailable', { dependency, requestId, clientRequestId, method: c.req.method, route: routePattern(c), errorName: cause.name, errorCode: cause.code })
    const headers = { 'Retry-After': String(DEPENDENCY_RETRY_AFTER_SEC) }
    return new ApiError(UNAVAILABLE_CODE[dependency], { headers })
  }
  const input = inputDatabaseError(sqlState(err))
  if (input) {
    logRequestError(c, 'request.refused_by_database', err, 'warn')
    return input
  }
  logRequestError(c, 'request.unhandled_error', err, 'error')
  return new ApiError('INTERNAL')
}

/** The innermost error's name and code (errno or SQLSTATE): what a dependency's failure is logged with. */
function rootCause(err: unknown): { name?: string; code?: string } {
  let e = err as { name?: unknown; code?: unknown; cause?: unknown; sourceError?: unknown }
  for (let depth = 0; depth < 6 && e && typeof e === 'object'; depth++) {
    const next = (e.cause ?? e.sourceError) as typeof e | undefined
    if (!next || typeof next !== 'object') break
    e = next
  }
  const name = typeof e?.name === 'string' ? e.name : undefined
  const code = typeof e?.code === 'string' ? e.code : undefined
  return { name, code }
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
