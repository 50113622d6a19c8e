import type { Context } from 'hono'
import { formatUnits, isAddress, isAddressEqual, parseUnits } from 'viem'
import type { AppEnv } from '../context'
import { ApiError } from '../http/errors'
import { errorFields, log } from '../log'
import { debitSession, findSession, isSessionId, refundDebit } from './sessions'
import { decodeVoucher, VOUCHER_HEADER, voucherSigner } from './voucher'

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
 * How a client pays with a session, for the gateway's OpenAPI description: the headers, the voucher, the checks
 * in the order they refuse.
 */
export const SESSION_PAYMENT_DOC = [
  'With `X-Payment-Method: session`, send `X-Session-Id`, `X-Wallet-Address` (the wallet that opened the session, ',
  `any case) and \`${VOUCHER_HEADER}\`: base64url (no padding) of the JSON \`{cumulativeAmount, nonce, signature}\`, `,
  'amounts as decimal strings of token base units (6 decimals for USDC), `signature` the wallet’s EIP-712 signature ',
  "(65 bytes, hex) of `Voucher {string sessionId; uint256 cumulativeAmount; uint256 nonce}` under the domain ",
  "`{name: 'Platform', version: '1', chainId: 8453}` (no verifying contract). `cumulativeAmount` is the most the ",
  'session may have spent in all once this call is paid: the call is taken only when `spent + price` is at most it ',
  'and at most the deposit. Each nonce pays one call, ever (the server guarantees single use; choosing them ',
  'increasing, e.g. `lastNonce + 1` from `GET /api/wallet/sessions/{id}`, is the client’s duty; out of order is ',
  'fine). A call the plugin then fails is given back, its nonce still used. Refusals, all 402, in this order: ',
  '`session_required` (no `X-Session-Id` or `X-Wallet-Address`); `session_invalid` (no such session for that ',
  'wallet); `voucher_failed` (voucher missing or garbled, or not signed by the session’s wallet for this session); ',
  '`insufficient_balance` (`session: {remaining, cost}` in USD); `voucher_failed` (`cumulativeAmount` below ',
  '`spent + price`, or nonce already used). On success the answer carries `Payment-Receipt: session:<sessionId>:<nonce>` ',
  'and `X-Session-Remaining` (USD left).',
].join('')

const invalid = () => new ApiError('SESSION_INVALID', 'No payment session with that id belongs to that wallet')
const voucherFailed = (message: string) => new ApiError('VOUCHER_FAILED', message)
const PRICE = /^[0-9]{1,12}(\.[0-9]{1,36})?$/

/**
 * Debits the payment session the request names (`X-Session-Id`, `X-Wallet-Address`, and the voucher) by the
 * plugin's price, or throws the spec's gateway error (`session_required`, `session_invalid`,
 * `insufficient_balance` with `session.remaining` and `session.cost`, `voucher_failed`).
 * The price is in USD and the session's token counts 1 token = 1 USD (`PAYMENT_TOKEN_DECIMALS` converts).
 * One database transaction on the way in (the debit and the nonce); `refund()` is a second one, and logs
 * rather than throws when it fails (the plugin's failure is still what the caller should hear).
 */
export async function chargeSession(c: Context<AppEnv>, charge: { pluginId: string; priceUsd: string }): Promise<SessionCharge> {
  const { db, reader, config } = c.var.services
  const sessionId = c.req.header('x-session-id')?.trim()
  const wallet = c.req.header('x-wallet-address')?.trim()
  if (!sessionId || !wallet) throw new ApiError('SESSION_REQUIRED', 'X-Session-Id and X-Wallet-Address are required to pay with a session')
  if (!isSessionId(sessionId) || !isAddress(wallet, { strict: false })) throw invalid()
  if (!PRICE.test(charge.priceUsd)) throw new ApiError('GATEWAY_INTERNAL', 'The plugin has no valid price')
  const decimals = config.PAYMENT_TOKEN_DECIMALS
  const cost = parseUnits(charge.priceUsd, decimals)

  // An unknown session is `session_invalid` whatever the voucher: looked up only when the voucher fails.
  const refuseVoucher = async (message: string): Promise<never> => {
    if (!(await findSession(reader, sessionId, wallet))) throw invalid()
    throw voucherFailed(message)
  }
  const voucher = decodeVoucher(c.req.header(VOUCHER_HEADER))
  if (!voucher) return refuseVoucher(`Missing or malformed ${VOUCHER_HEADER}`)
  const signer = await voucherSigner(sessionId, voucher)
  if (!signer || !isAddressEqual(signer, wallet)) return refuseVoucher('The voucher is not signed by the session’s wallet for this session')

  const result = await debitSession(db, { sessionId, wallet, amount: cost, cumulativeAmount: voucher.cumulativeAmount, nonce: voucher.nonce, pluginId: charge.pluginId })
  if ('reason' in result) {
    switch (result.reason) {
      case 'unknown':
        throw invalid()
      case 'short':
        throw new ApiError('INSUFFICIENT_BALANCE', {
          message: 'The payment session cannot cover this call',
          extra: { session: { remaining: formatUnits(result.deposit - result.spent, decimals), cost: formatUnits(cost, decimals) } },
        })
      case 'cumulative':
        throw voucherFailed('The voucher’s cumulativeAmount does not cover this call')
      case 'nonce_used':
        throw voucherFailed('The voucher’s nonce was already used')
    }
  }

  let refunded: Promise<void> | undefined
  return {
    receipt: `session:${sessionId}:${voucher.nonce}`,
    remaining: formatUnits(result.deposit - result.spent, decimals),
    refund: () =>
      (refunded ??= refundDebit(db, { sessionId, nonce: voucher.nonce, amount: cost }).then(
        (given) => log.info('payment_session.refunded', { requestId: c.var.requestId, sessionId, pluginId: charge.pluginId, refunded: given }),
        (e: unknown) => log.error('payment_session.refund_failed', { requestId: c.var.requestId, sessionId, nonce: voucher.nonce, ...errorFields(e) }),
      )),
  }
}
