import type { Context } from 'hono'
import { parseUnits } from 'viem'
import type { AppEnv, SessionUser } from '../../lib/context'
import { chargeSession } from '../../lib/payments/session-charge'
import { spendAllowance } from './card'
import { paymentRequired } from './challenge'
import { PaymentRefused } from '../../lib/gateway/errors'
import { acceptCredential, hasPaymentAuthorization } from './mpp'
import type { Plugin } from './plugins'

export const PAYMENT_METHODS = ['stripe', 'mpp', 'session'] as const
export type PaymentMethod = (typeof PAYMENT_METHODS)[number]

/** Spec 2 "Gateway": the `X-Payment-Method` header, else `Authorization: Payment …` means mpp, else stripe. */
export function paymentMethodOf(declared: PaymentMethod | undefined, authorization: string | undefined): PaymentMethod {
  return declared ?? (hasPaymentAuthorization(authorization) ? 'mpp' : 'stripe')
}

export const isFree = (plugin: Plugin) => parseUnits(plugin.price, 6) === 0n

/** Whether the request brings the chosen method's proof of payment (which also authenticates it). */
export function presentsPayment(c: Context<AppEnv>, method: PaymentMethod): boolean {
  if (method === 'mpp') return hasPaymentAuthorization(c.req.header('authorization'))
  if (method === 'session') return !!(c.req.header('x-session-id') || c.req.header('x-wallet-address'))
  return false
}

/** A call paid for: what the response says about it, and `release()` to refund it when the plugin failed. */
export interface Payment {
  /** `Payment-Receipt`: the transaction hash (MPP) or `session:<id>:<nonce>`. */
  receipt?: string
  /** `X-Session-Remaining`: the session's USD balance after the debit. */
  remaining?: string
  release(): Promise<void>
}

/**
 * Takes payment for one call of a paid `plugin` by `method`, or throws: 402 `payment_required` with a fresh
 * challenge (no payment, a refused one, no paid access, a spent allowance), the session method's own errors,
 * 503 `CHAIN_UNAVAILABLE`.
 */
export async function takePayment(c: Context<AppEnv>, plugin: Plugin, method: PaymentMethod, caller: SessionUser | null): Promise<Payment> {
  try {
    if (method === 'session') {
      const charge = await chargeSession(c, { pluginId: plugin.id, priceUsd: plugin.price })
      return { receipt: charge.receipt, remaining: charge.remaining, release: () => charge.refund() }
    }
    if (method === 'mpp') {
      const authorization = c.req.header('authorization')
      if (!authorization || !hasPaymentAuthorization(authorization)) {
        return await paymentRequired(c, plugin, caller, 'Payment required: pay the MPP challenge and send the credential as `Authorization: Payment <credential>`')
      }
      const paid = await acceptCredential(c.var.services, plugin, authorization)
      return { receipt: paid.receipt, release: paid.release }
    }
    const charge = caller ? await spendAllowance(c.var.services, caller, plugin) : null
    if (!charge) {
      const why = caller ? 'your account has no paid plan or trial' : 'no payment came with the call'
      return await paymentRequired(c, plugin, caller, `Payment required: ${why}. Pay with MPP, a payment session, or a paid plan (card)`)
    }
    return { release: charge.release }
  } catch (e) {
    // On the card method a refusal is a spent allowance: the caller already has a plan.
    if (e instanceof PaymentRefused) return paymentRequired(c, plugin, caller, e.message, method === 'stripe')
    throw e
  }
}
