import { eq } from 'drizzle-orm'
import type { Context } from 'hono'
import { parseUnits } from 'viem'
import { users } from '../../schema'
import { isTrustedOrigin, readSession } from '../../lib/auth/session'
import { PLAN_RECORD_COLUMNS } from '../../lib/auth/plan'
import { accessPlan } from '../../lib/billing/plans'
import { giveBackUnits, spendUnits } from '../../lib/billing/usage'
import type { Config } from '../../lib/config'
import type { AppEnv, Services, SessionUser } from '../../lib/context'
import { ApiError } from '../../lib/http/errors'
import type { Plugin } from './plugins'

/**
 * The card method (`stripe`, the default): a signed-in caller with paid access pays from the plan's daily usage
 * allowance; anyone else is offered a card checkout in the 402.
 */

/**
 * The caller's session, read without requiring one. A cookie counts only on a request from a trusted origin (or
 * none): a foreign page cannot spend a user's allowance through their browser; its calls are anonymous.
 */
export async function optionalCaller(c: Context<AppEnv>): Promise<SessionUser | null> {
  return isTrustedOrigin(c) ? readSession(c) : null
}

/** Usage units a call costs: one per started US cent of its price, at least one (each default plugin: 1). */
export function unitsFor(price: string): number {
  const micros = parseUnits(price, 6)
  return Math.max(1, Number((micros + 9_999n) / 10_000n))
}

/** Units spent for a call, and how to give them back when the plugin could not serve it. */
export interface AllowanceCharge {
  units: number
  release(): Promise<void>
}

/** Paid access whose allowance for today and credits are spent: the route answers 402 `payment_required` saying so. */
export const ALLOWANCE_SPENT = `Today's usage allowance and your credits are spent (the allowance returns at midnight UTC): buy credits, or pay this call with MPP or a payment session`

/**
 * Spends the call's units from `user`'s allowance when the user has paid access at the moment of use (`accessPlan`:
 * a paid plan's, the trial's solo with a verified real mailbox, an admin's network), then from credits once the allowance
 * is spent (1 credit = 100 units, lib/billing/usage.ts); null without paid access, `'spent'` when both are.
 */
export async function spendAllowance(services: Services, user: SessionUser, plugin: Plugin): Promise<AllowanceCharge | 'spent' | null> {
  const [record] = await services.reader.asUser(user.id, (db) => db.select(PLAN_RECORD_COLUMNS).from(users).where(eq(users.id, user.id)).limit(1))
  const plan = record ? accessPlan(record, services.config) : null
  if (!plan) return null
  const units = unitsFor(plugin.price)
  let spent
  try {
    spent = await spendUnits(services, user.id, plan, units)
  } catch (e) {
    if (e instanceof ApiError && e.code === 'USAGE_LIMIT') return 'spent'
    throw e
  }
  return { units, release: () => giveBackUnits(services, user.id, spent) }
}

/**
 * The 402's `stripe.checkoutUrl`: null when Stripe is not configured. A signed-in caller without paid access gets
 * the plan checkout (`{base_url}/api/stripe/checkout?plan=solo`: the stripe family makes the Checkout Session when
 * it is followed, so an unpaid call costs no Stripe request); anyone else (anonymous, or a plan whose allowance is
 * spent today) the pricing page `{base_url}/pricing?plugin=<id>`.
 */
export function checkoutUrl(config: Config, user: SessionUser | null, paid: boolean, plugin: Plugin): string | null {
  if (!config.STRIPE_SECRET_KEY) return null
  if (user && !paid && !user.isAdmin && config.STRIPE_PRICE_SOLO) return `${config.baseUrl}/api/stripe/checkout?plan=solo`
  return `${config.baseUrl}/pricing?plugin=${encodeURIComponent(plugin.id)}`
}
