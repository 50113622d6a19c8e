import type { Context } from 'hono'
import { parseUnits } from 'viem'
import type { AppEnv, SessionUser } from '../../lib/context'
import { chargeSession } from '../../lib/payments/session-charge'
import { ALLOWANCE_SPENT, spendAllowance } from './card'
import { paymentRequired } from './challenge'
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
  if (method === 'session') {
    const charge = await chargeSession(c, { pluginId: plugin.id, priceUsd: plugin.price })
    return { receipt: charge.receipt, remaining: charge.remaining, release: () => charge.refund() }
  }
  if (method === 'mpp') {
    const authorization = c.req.header('authorization')
    if (!authorization || !hasPaymentAuthorization(authorization)) {
      return paymentRequired(c, plugin, caller, 'Payment required: pay the MPP challenge and send the credential as `Authorization: Payment <credential>`')
    }
    const paid = await acceptCredential(c.var.services, plugin, authorization)
    if ('refused' in paid) return paymentRequired(c, plugin, caller, paid.refused)
    return { receipt: paid.receipt, release: paid.release }
  }
  const charge = caller ? await spendAllowance(c.var.services, caller, plugin) : null
  // A spent allowance: the caller already has a plan, so the 402 offers the pricing page, not a plan checkout.
  if (charge === 'spent') return paymentRequired(c, plugin, caller, ALLOWANCE_SPENT, true)
  if (!charge) {
    const why = caller ? 'your account has no paid plan or trial' : 'no payment came with the call'
    return paymentRequired(c, plugin, caller, `Payment required: ${why}. Pay with MPP, a payment session, or a paid plan (card)`)
  }
  return { release: charge.release }
}
