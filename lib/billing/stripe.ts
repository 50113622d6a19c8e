import { eq } from 'drizzle-orm'
import Stripe from 'stripe'
import type { Config } from '../config'
import type { Db } from '../db/rls'
import { readAsUser, type Reader } from '../db/rls'
import { errorFields, type LogFields } from '../log'
import { users } from '../../schema'
import { PLANS, type PlanName } from './plans'

/**
 * The Stripe SDK as it runs on Workers: fetch for HTTP, SubtleCrypto for webhook signatures. One client per
 * request (no module-global connection); null when `STRIPE_SECRET_KEY` is unset, so callers answer "not
 * configured". `STRIPE_API_URL` points it elsewhere (tests: a local fake of the calls used).
 */
export function stripeClient(config: Config): Stripe | null {
  if (!config.STRIPE_SECRET_KEY) return null
  const api = config.STRIPE_API_URL ? new URL(config.STRIPE_API_URL) : null
  return new Stripe(config.STRIPE_SECRET_KEY, {
    httpClient: Stripe.createFetchHttpClient(),
    maxNetworkRetries: 1,
    timeout: config.STRIPE_TIMEOUT_MS,
    ...(api && { host: api.hostname, port: Number(api.port || (api.protocol === 'https:' ? 443 : 80)), protocol: api.protocol === 'http:' ? 'http' : 'https' }),
  })
}

/** Verifies webhook signatures with Web Crypto (the SDK's default provider is Node's crypto). */
export const webhookCrypto = () => Stripe.createSubtleCryptoProvider()

/** Monthly plan prices: Stripe price ids from configuration, never amounts from a request. */
export function planPriceId(config: Config, plan: PlanName): string | undefined {
  return {
    solo: config.STRIPE_PRICE_SOLO,
    collective: config.STRIPE_PRICE_COLLECTIVE,
    label: config.STRIPE_PRICE_LABEL,
    network: config.STRIPE_PRICE_NETWORK,
  }[plan]
}

/** Credit packs (spec "Credit packs"): pack -> credits, and each pack's price id from configuration. */
export const CREDIT_PACKS = { 50: 5, 200: 15, 500: 30 } as const
export type CreditPack = keyof typeof CREDIT_PACKS

export function creditPriceId(config: Config, pack: CreditPack): string | undefined {
  return { 50: config.STRIPE_PRICE_CREDITS_50, 200: config.STRIPE_PRICE_CREDITS_200, 500: config.STRIPE_PRICE_CREDITS_500 }[pack]
}

/**
 * Days of Stripe trial a plan checkout carries (spec: "redirects 303 to the payment page with a 7-day trial"), only
 * for a buyer who has never had a subscription: cancelling and checking out again does not start another trial.
 */
export const CHECKOUT_TRIAL_DAYS = 7

/** The buyer a checkout is for: the signed-in user, their Stripe customer once they have one, and their subscription. */
export interface Buyer {
  id: string
  email: string
  stripeCustomerId: string | null
  /** The last subscription the user had (kept after it ends); null when they never had one. */
  subscriptionId: string | null
  subscriptionStatus: string
}

/** The signed-in caller as a Stripe buyer (one read, as the user). */
export async function readBuyer(c: { var: { services: { reader: Reader }; user: { id: string; email: string } } }): Promise<Buyer> {
  const [row] = await readAsUser(c, (tx: Db) =>
    tx
      .select({ stripeCustomerId: users.stripeCustomerId, subscriptionId: users.subscriptionId, subscriptionStatus: users.subscriptionStatus })
      .from(users)
      .where(eq(users.id, c.var.user.id))
      .limit(1),
  )
  return {
    id: c.var.user.id,
    email: c.var.user.email,
    stripeCustomerId: row?.stripeCustomerId ?? null,
    subscriptionId: row?.subscriptionId ?? null,
    subscriptionStatus: row?.subscriptionStatus ?? 'inactive',
  }
}

/** A buyer who already pays (or whose payment Stripe is retrying) must not start a second subscription. */
export const alreadySubscribed = (buyer: Buyer) => buyer.subscriptionStatus === 'active' || buyer.subscriptionStatus === 'past_due'

/** `metadata.kind` on every Checkout Session this service creates: the webhook dispatches on it. */
export type CheckoutKind = 'plan' | 'credits' | 'expert-setup' | 'wallet-top-up'

/**
 * A subscription checkout for `plan`, with the 7-day trial only when the buyer never had a subscription; the webhook
 * and verify bind it to the buyer by `client_reference_id`. Callers refuse an `alreadySubscribed` buyer first.
 */
export function createPlanCheckout(stripe: Stripe, config: Config, buyer: Buyer, plan: PlanName, priceId: string) {
  return stripe.checkout.sessions.create({
    mode: 'subscription',
    line_items: [{ price: priceId, quantity: 1 }],
    subscription_data: { ...(buyer.subscriptionId === null && { trial_period_days: CHECKOUT_TRIAL_DAYS }), metadata: { userId: buyer.id, plan } },
    client_reference_id: buyer.id,
    ...(buyer.stripeCustomerId ? { customer: buyer.stripeCustomerId } : { customer_email: buyer.email }),
    metadata: { kind: 'plan' satisfies CheckoutKind, userId: buyer.id, plan },
    success_url: `${config.baseUrl}/checkout/success?session_id={CHECKOUT_SESSION_ID}&plan=${plan}`,
    cancel_url: `${config.baseUrl}/pricing?cancelled=1`,
  })
}

/** A one-time payment for a credit pack; credits are granted by the webhook once the payment is confirmed. */
export function createCreditsCheckout(stripe: Stripe, config: Config, buyer: Buyer, pack: CreditPack, priceId: string) {
  return stripe.checkout.sessions.create({
    mode: 'payment',
    line_items: [{ price: priceId, quantity: 1 }],
    client_reference_id: buyer.id,
    ...(buyer.stripeCustomerId ? { customer: buyer.stripeCustomerId } : { customer_email: buyer.email }),
    metadata: { kind: 'credits' satisfies CheckoutKind, userId: buyer.id, pack: String(pack), credits: String(CREDIT_PACKS[pack]) },
    success_url: `${config.baseUrl}/dashboard/billing?credits=success&session_id={CHECKOUT_SESSION_ID}`,
    cancel_url: `${config.baseUrl}/dashboard/billing?credits=cancelled`,
  })
}

/** The plan a Stripe price id belongs to (the reverse of `planPriceId`), for events that name only the price. */
export function planForPrice(config: Config, priceId: string | null | undefined): PlanName | undefined {
  if (!priceId) return undefined
  return (Object.keys(PLANS) as PlanName[]).find((plan) => planPriceId(config, plan) === priceId)
}

/** The one-time expert setup (49 GBP from `STRIPE_PRICE_EXPERT_SETUP`) for a chosen slot; the webhook only logs it. */
export function createExpertSetupCheckout(stripe: Stripe, config: Config, booking: { date: string; time: string; email: string }, priceId: string) {
  return stripe.checkout.sessions.create({
    mode: 'payment',
    line_items: [{ price: priceId, quantity: 1 }],
    customer_email: booking.email,
    metadata: { kind: 'expert-setup' satisfies CheckoutKind, date: booking.date, time: booking.time },
    success_url: `${config.baseUrl}/expert-setup/success`,
    cancel_url: `${config.baseUrl}/pricing?cancelled=1`,
  })
}

/** Card top-up amounts for a wallet, in USD cents (`GET /api/wallet/top-up`). */
export const TOP_UP_AMOUNTS = [500, 1000, 2500, 5000] as const
export type TopUpAmount = (typeof TOP_UP_AMOUNTS)[number]

/**
 * A one-time card payment of `amount` USD cents to top up `address` (a wallet on chain 8453): an inline `price_data`
 * (no configured price id: the amount is one of `TOP_UP_AMOUNTS`), the wallet and the buyer in the metadata.
 * Delivering the funds after payment is not part of this checkout (the webhook ignores `wallet-top-up` for now).
 */
export function createTopUpCheckout(stripe: Stripe, config: Config, topUp: { amount: TopUpAmount; address: string; userId: string; email: string }) {
  return stripe.checkout.sessions.create({
    mode: 'payment',
    line_items: [{ quantity: 1, price_data: { currency: 'usd', unit_amount: topUp.amount, product_data: { name: 'Wallet top-up (USDC on Base)' } } }],
    client_reference_id: topUp.userId,
    customer_email: topUp.email,
    metadata: { kind: 'wallet-top-up' satisfies CheckoutKind, userId: topUp.userId, address: topUp.address, amountCents: String(topUp.amount) },
    success_url: `${config.baseUrl}/dashboard/wallet?top_up=success&session_id={CHECKOUT_SESSION_ID}`,
    cancel_url: `${config.baseUrl}/dashboard/wallet?top_up=cancelled`,
  })
}

/** A Stripe SDK error for the log: its kind, HTTP status and Stripe's code (never the request). */
export function stripeErrorFields(e: unknown): LogFields {
  const { statusCode, code, type } = (e ?? {}) as { statusCode?: number; code?: string; type?: string }
  return { ...errorFields(e), stripeType: type, stripeStatus: statusCode, stripeCode: code }
}

/** Stripe does not know the object (`resource_missing`, 404). */
export const isStripeNotFound = (e: unknown) => (e as { statusCode?: number } | null)?.statusCode === 404

/** Seconds a webhook delivery's signature timestamp may be old (Stripe's default tolerance). */
export const WEBHOOK_TOLERANCE_SEC = 300

/**
 * A webhook delivery as Stripe signed it: the raw body checked against `Stripe-Signature` (HMAC-SHA256 with the
 * endpoint secret, timestamp within the tolerance) with Web Crypto. Throws on a missing, forged or stale signature.
 */
export function verifyWebhookEvent(raw: string, signature: string, secret: string) {
  return Stripe.webhooks.constructEventAsync(raw, signature, secret, WEBHOOK_TOLERANCE_SEC, webhookCrypto())
}

/** How a price shows to a person: `£5.00` (minor units and ISO currency, as Stripe reports them). */
export function formatPrice(amountMinor: number | null | undefined, currency: string | null | undefined): string {
  const code = (currency ?? 'gbp').toUpperCase()
  try {
    return new Intl.NumberFormat('en-GB', { style: 'currency', currency: code }).format((amountMinor ?? 0) / 100)
  } catch {
    return `${((amountMinor ?? 0) / 100).toFixed(2)} ${code}`
  }
}

/** The plan's monthly price as the catalogue states it (GBP). */
export const monthlyPrice = (plan: PlanName) => formatPrice(PLANS[plan].monthlyGbp * 100, 'gbp')
