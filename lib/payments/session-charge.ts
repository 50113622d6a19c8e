import type { Context } from 'hono'
import type { AppEnv } from '../context'
import { gatewayError } from '../gateway/errors'

/** A debit the gateway made against a payment session (spec 2 "Gateway", session billing). */
export interface SessionCharge {
  /** `session:<sessionId>:<nonce>` (the `Payment-Receipt` header). */
  receipt: string
  /** USD left after the debit, as a decimal string (the `X-Session-Remaining` header). */
  remaining: string
  /** Gives the debit back when the plugin could not serve the call (the voucher's nonce stays used). */
  refund(): Promise<void>
}

/**
 * Debits the payment session the request names (`X-Session-Id`, `X-Wallet-Address`, and the voucher) by the
 * plugin's price, or throws the spec's gateway error (`session_required`, `session_invalid`,
 * `insufficient_balance` with `session.remaining` and `session.cost`, `voucher_failed`).
 * PLACEHOLDER until the payment-sessions work lands.
 */
export async function chargeSession(_c: Context<AppEnv>, _charge: { pluginId: string; priceUsd: string }): Promise<SessionCharge> {
  throw gatewayError(500, 'internal', 'Payment sessions are not available')
}
