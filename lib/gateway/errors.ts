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
 * the shared `onError` (with `headers`, e.g. the 402's `WWW-Authenticate`).
 */
export const gatewayError = (
  status: ContentfulStatusCode,
  error: GatewayErrorCode,
  message: string,
  extra?: Record<string, unknown>,
  headers?: Record<string, string>,
) => new ApiError(status, error, { code: error.toUpperCase() as ErrorCode, extra: { message, ...extra }, ...(headers && { headers }) })

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
