import type { Context } from 'hono'
import type Stripe from 'stripe'
import type { PlanName } from '../../../lib/billing/plans'
import {
  alreadySubscribed,
  CREDIT_PACKS,
  createCreditsCheckout,
  createPlanCheckout,
  creditPriceId,
  formatPrice,
  planPriceId,
  readBuyer,
  stripeClient,
  type CreditPack,
} from '../../../lib/billing/stripe'
import type { SignedInEnv } from '../../../lib/context'
import { ApiError } from '../../../lib/http/errors'
import { errorFields, log } from '../../../lib/log'

const notConfigured = () => new ApiError('NOT_CONFIGURED', 'Stripe not configured')

/** A Checkout Session, or 500 `PAYMENT_PROVIDER_UNAVAILABLE` when Stripe fails or cannot be reached (nothing is stored). */
async function checkout(what: string, create: () => Promise<Stripe.Checkout.Session>) {
  try {
    const session = await create()
    if (!session.url) throw new Error('checkout session without url')
    return session
  } catch (e) {
    log.error('billing.checkout_failed', { what, ...errorFields(e) })
    throw new ApiError('PAYMENT_PROVIDER_UNAVAILABLE', 'Checkout failed')
  }
}

/**
 * `create-checkout`: a subscription Checkout for `plan` (GBP; the 7-day trial only for a user who never had a
 * subscription), price id from configuration; 409 `Already subscribed` while the subscription is active or past due.
 */
export async function createCheckout(c: Context<SignedInEnv>, plan: PlanName) {
  const { config } = c.var.services
  const stripe = stripeClient(config)
  const priceId = planPriceId(config, plan)
  if (!stripe || !priceId) throw notConfigured()
  const buyer = await readBuyer(c)
  if (alreadySubscribed(buyer)) throw new ApiError('CONFLICT', 'Already subscribed')
  const session = await checkout('plan', async () => createPlanCheckout(stripe, config, buyer, plan, priceId))
  return { url: session.url! }
}

/** `buy-credits`: a one-time Checkout for a credit pack; the credits are granted by the webhook once it is paid. */
export async function buyCredits(c: Context<SignedInEnv>, pack: CreditPack) {
  const { config } = c.var.services
  const stripe = stripeClient(config)
  const priceId = creditPriceId(config, pack)
  if (!stripe || !priceId) throw notConfigured()
  const session = await checkout('credits', async () => createCreditsCheckout(stripe, config, await readBuyer(c), pack, priceId))
  return { success: true as const, credits: CREDIT_PACKS[pack], price: formatPrice(session.amount_total, session.currency), url: session.url! }
}
