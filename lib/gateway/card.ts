import { eq } from 'drizzle-orm'
import type { Context } from 'hono'
import { parseUnits } from 'viem'
import { users } from '../../schema'
import { isTrustedOrigin, readSession } from '../auth/session'
import { hasPaidAccess, normalizePlan } from '../billing/plans'
import { CREDIT_PACKS, createCreditsCheckout, creditPriceId, readBuyer, stripeClient, stripeErrorFields, type CreditPack } from '../billing/stripe'
import { giveBackUnits, spendUnits } from '../billing/usage'
import type { AppEnv, Services, SessionUser } from '../context'
import { ApiError } from '../http/errors'
import { log } from '../log'
import { PaymentRefused } from './errors'
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

/**
 * Spends the call's units from `user`'s allowance when the user has paid access (a paid plan, or the trial;
 * admins on the `network` allowance); null without paid access. A spent allowance is `PaymentRefused`.
 */
export async function spendAllowance(services: Services, user: SessionUser, plugin: Plugin): Promise<AllowanceCharge | null> {
  const [record] = await services.reader.asUser(user.id, (db) =>
    db.select({ plan: users.plan, subscriptionStatus: users.subscriptionStatus, trialEndsAt: users.trialEndsAt }).from(users).where(eq(users.id, user.id)).limit(1),
  )
  const paid = !!record && hasPaidAccess(record)
  if (!paid && !user.isAdmin) return null
  const plan = paid ? normalizePlan(record.plan) : 'network'
  const units = unitsFor(plugin.price)
  const spentAt = Date.now()
  try {
    await spendUnits(services.kv, user.id, plan, units, { now: spentAt })
  } catch (e) {
    if (e instanceof ApiError && e.code === 'USAGE_LIMIT') {
      throw new PaymentRefused(`Today's usage allowance is spent (it returns at midnight UTC): pay this call with MPP or a payment session`)
    }
    throw e
  }
  return { units, release: () => giveBackUnits(services.kv, user.id, units, spentAt) }
}

// The cheapest pack (spec "Credit packs": 50, 200, 500).
const SMALLEST_PACK = Math.min(...Object.keys(CREDIT_PACKS).map(Number)) as CreditPack
// A caller who keeps calling unpaid gets the same Checkout Session for a while, not a new one per call.
const CHECKOUT_REUSE_MS = 10 * 60 * 1000
const checkoutKey = (userId: string) => `gateway:checkout:${userId}`

/**
 * The 402's `stripe.checkoutUrl`: null when Stripe is not configured; for a signed-in caller a Stripe Checkout
 * Session for the smallest credit pack (reused for 10 minutes); for anyone else, or when that cannot be made,
 * the pricing page `{base_url}/pricing?plugin=<id>`.
 */
export async function checkoutUrl(services: Services, user: SessionUser | null, plugin: Plugin): Promise<string | null> {
  const { config, kv } = services
  const stripe = stripeClient(config)
  if (!stripe) return null
  const pricing = `${config.baseUrl}/pricing?plugin=${encodeURIComponent(plugin.id)}`
  const priceId = creditPriceId(config, SMALLEST_PACK)
  if (!user || !priceId) return pricing
  const reused = await kv.get<string>(checkoutKey(user.id))
  if (reused) return reused
  try {
    const session = await createCreditsCheckout(stripe, config, await readBuyer({ var: { services, user } }), SMALLEST_PACK, priceId)
    if (!session.url) return pricing
    await kv.set(checkoutKey(user.id), session.url, { ttlMs: CHECKOUT_REUSE_MS })
    return session.url
  } catch (e) {
    log.warn('gateway.checkout_failed', stripeErrorFields(e))
    return pricing
  }
}
