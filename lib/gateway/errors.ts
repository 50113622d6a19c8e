import type { ContentfulStatusCode } from 'hono/utils/http-status'
import type { ErrorCode } from '../http/error-codes'
import { ApiError } from '../http/errors'

/** The gateway's error codes (spec 2 "Errors": exact). `error` carries the code itself; `message` says it in words. */
export type GatewayErrorCode =
  | 'unknown_plugin'
  | 'payment_required'
  | 'session_required'
  | 'session_invalid'
  | 'insufficient_balance'
  | 'voucher_failed'
  | 'internal'
  | 'no_plugin'

/**
 * The one way gateway code refuses: `{error: '<spec code>', code: '<CATALOGUE_CODE>', message, ...extra}` through
 * the shared `onError` (with `headers`, e.g. the 402's `WWW-Authenticate`). Every 402 is `Cache-Control: no-store`
 * (as the MPP draft asks): it carries a single-use challenge or a session's balance, which no cache may replay.
 */
export function gatewayError(
  status: ContentfulStatusCode,
  error: GatewayErrorCode,
  message: string,
  extra?: Record<string, unknown>,
  headers?: Record<string, string>,
) {
  const all = status === 402 ? { 'Cache-Control': 'no-store', ...headers } : headers
  return new ApiError(status, error, { code: error.toUpperCase() as ErrorCode, extra: { message, ...extra }, ...(all && { headers: all }) })
}

/**
 * A payment that did not pay for the call (a refused MPP credential, a spent allowance): the route answers it
 * with 402 `payment_required`, `message` saying why, and a fresh challenge.
 */
export class PaymentRefused extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'PaymentRefused'
  }
}
