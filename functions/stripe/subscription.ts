import { eq, sql } from 'drizzle-orm'
import type Stripe from 'stripe'
import type { Config } from '../../lib/config'
import type { Db } from '../../lib/db/rls'
import { log } from '../../lib/log'
import type { Queue } from '../../lib/context'
import { creditPurchases, subscriptionDeployOutbox, users } from '../../schema'
import type { PendingDeploy } from './deploy-outbox'
import { normalizePlan, PAID_STATUSES, PLAN_NAMES, PLANS, type PlanName, type SubscriptionStatus } from '../../lib/billing/plans'
import { CREDIT_PACKS, type CheckoutKind, type CreditPack, planForPrice, TOP_UP_AMOUNTS } from '../../lib/billing/stripe'
import { BASE_CHAIN_ID } from '../../lib/chain'
import { creditCardTopUp } from '../../lib/payments/sessions'

/** Where a completed plan checkout hands the runtime deploy (the web's queue receiver calls the backend). */
export const SUBSCRIPTION_DEPLOY_PATH = '/api/queue/subscription-deploy'

/** The queued deploy's body: the backend's `POST /api/subscriptions/deploy` fields, and whose it is. */
export interface SubscriptionDeployJob {
  tier: PlanName
  stripeCustomerId: string
  subscriptionId: string | null
  userId: string
}

/**
 * What applying an event or a checkout did, recorded on its `stripe_events` row: `applied`; `duplicate` (seen
 * before: nothing done); `stale` (older than the newest applied to the user); `unpaid` (not paid yet); `unknown_user`;
 * `other_subscription` (about a subscription the user has moved on from); `ignored` (a type or kind with no effect);
 * `logged` (expert setup); `invalid` (metadata this service never writes).
 */
export type Outcome = 'applied' | 'duplicate' | 'stale' | 'unpaid' | 'unknown_user' | 'other_subscription' | 'ignored' | 'logged' | 'invalid'

/** What the effects need besides the transaction. */
export interface BillingDeps {
  config: Config
  queue: Queue
  /**
   * Told of a user whose applied change may take paid access away or lower the plan (a status that does not pay, or
   * another plan): once the transaction commits, the watchdog reconciles them (functions/stripe/webhook.ts).
   */
  accessChanged?: (userId: string) => void
  /**
   * Told of a plan checkout's deploy, written to the outbox in the same transaction: once it commits, the caller
   * publishes it (functions/stripe/deploy-outbox.ts `publishDeploys`); one the queue does not take stays for the sweep.
   */
  deployKept?: (deploy: PendingDeploy) => void
}

const places = (plan: string | null) => {
  const n = PLANS[normalizePlan(plan)].agents
  return n < 0 ? Infinity : n
}

/** Whether a change from `before` to `after` may take paid access away or lower the plan's agent count. */
const mayLowerAccess = (before: { plan: string | null; subscriptionStatus: string }, after: { plan: string | null; subscriptionStatus: string }) =>
  !(PAID_STATUSES as readonly string[]).includes(after.subscriptionStatus) || places(after.plan) < places(before.plan)

/**
 * Stripe's subscription statuses on the four the spec names: trialing and active are `active` (a Stripe trial is
 * paid access), past_due `past_due` (Stripe is retrying the card: access continues), canceled, unpaid (retries
 * exhausted, nothing collected) and incomplete_expired `canceled` (paid access ends: 0-decisions "Access over
 * time"), incomplete and paused (and anything new) `inactive`.
 */
export function subscriptionStatusOf(status: string): SubscriptionStatus {
  switch (status) {
    case 'trialing':
    case 'active':
      return 'active'
    case 'past_due':
      return 'past_due'
    case 'canceled':
    case 'unpaid':
    case 'incomplete_expired':
      return 'canceled'
    default:
      return 'inactive'
  }
}

/** An id Stripe sends either bare or expanded into its object. */
export const idOf = (v: string | { id: string } | null | undefined): string | null => (typeof v === 'string' ? v : (v?.id ?? null))

const planNamed = (name: string | null | undefined): PlanName | undefined =>
  name && (PLAN_NAMES as string[]).includes(name) ? (name as PlanName) : undefined

/** End of the subscription's paid (or trial) period: its items' latest `current_period_end`, else `trial_end`. */
export function periodEndOf(sub: Pick<Stripe.Subscription, 'items' | 'trial_end'>): Date | null {
  const ends = (sub.items?.data ?? []).map((i) => i.current_period_end).filter((n): n is number => typeof n === 'number')
  const end = ends.length ? Math.max(...ends) : sub.trial_end
  return end ? new Date(end * 1000) : null
}

const fromUnix = (seconds: number) => new Date(seconds * 1000)

/** The user an event is about, locked for the rest of the transaction so two events for one user apply in turn. */
async function lockUser(tx: Db, by: { customerId?: string | null; userId?: string | null }) {
  const columns = {
    id: users.id,
    stripeCustomerId: users.stripeCustomerId,
    subscriptionId: users.subscriptionId,
    subscriptionEventAt: users.subscriptionEventAt,
    plan: users.plan,
    subscriptionStatus: users.subscriptionStatus,
  }
  if (by.customerId) {
    const [found] = await tx.select(columns).from(users).where(eq(users.stripeCustomerId, by.customerId)).limit(1).for('update')
    if (found) return found
  }
  if (by.userId) {
    const [found] = await tx.select(columns).from(users).where(eq(users.id, by.userId)).limit(1).for('update')
    if (found) return found
  }
  return undefined
}

/**
 * Events apply in Stripe's order: one older than the newest applied to this user changes nothing. `yields`: a
 * change without an event of its own (checkout verify) also gives way to an event of the same second.
 */
const isStale = (user: { subscriptionEventAt: Date | null }, at: Date, yields = false) =>
  !!user.subscriptionEventAt && (yields ? at.getTime() <= user.subscriptionEventAt.getTime() : at.getTime() < user.subscriptionEventAt.getTime())

/**
 * The effect of a completed Checkout Session, the one function both the webhook
 * (`checkout.session.completed`, `checkout.session.async_payment_succeeded`) and `GET /api/checkout/verify` run,
 * inside their transaction, so whichever comes first, the state is the same:
 * - `plan`: plan, status `active`, subscription and Stripe customer, at `at` (the event's time; verify uses the
 *   session's creation, and gives way to any event of that second or later); the subscription deploy is written to its
 *   outbox in the same transaction (`subscription_deploy_outbox`), published once it commits, and again by the deploy
 *   sweep while the queue has not taken it: a queue that is down delays the deploy, never the plan. The period end is left to the subscription's
 *   own events (the checkout event does not carry it), so verify and the webhook leave one state in either order.
 * - `credits`: once per payment (the session id), whatever event or request brings it: a `credit_purchases` row,
 *   and only if it was new, the pack's credits added.
 * - `wallet-top-up`: once per payment (the session id), whatever event or request brings it: the paid amount goes to
 *   the wallet's card-funded payment session (lib/payments/sessions.ts `creditCardTopUp`), 1 USD per 100 cents.
 * - `expert-setup`: logged.
 */
export async function applyCheckout(tx: Db, deps: BillingDeps, session: Stripe.Checkout.Session, at: Date, source: 'event' | 'verify' = 'event'): Promise<Outcome> {
  const kind = session.metadata?.kind as CheckoutKind | undefined
  const userId = session.client_reference_id ?? session.metadata?.userId ?? null
  if (kind === 'expert-setup') {
    log.info('stripe.expert_setup_paid', { sessionId: session.id, paymentStatus: session.payment_status, date: session.metadata?.date, time: session.metadata?.time })
    return 'logged'
  }
  if (kind === 'credits') return grantCredits(tx, session, userId)
  if (kind === 'wallet-top-up') return fundWalletTopUp(tx, deps, session, userId)
  if (kind !== 'plan') return 'ignored'
  if (session.status !== 'complete' || session.payment_status === 'unpaid') return 'unpaid'
  const user = userId ? await lockUser(tx, { userId }) : undefined
  if (!user) return 'unknown_user'
  if (isStale(user, at, source === 'verify')) return 'stale'
  const plan = planNamed(session.metadata?.plan) ?? 'solo'
  const customerId = idOf(session.customer)
  const subscriptionId = idOf(session.subscription)
  await tx
    .update(users)
    .set({
      plan,
      subscriptionStatus: 'active',
      subscriptionEventAt: at,
      updatedAt: new Date(),
      ...(subscriptionId && { subscriptionId }),
      ...(customerId && { stripeCustomerId: customerId }),
    })
    .where(eq(users.id, user.id))
  if (customerId) {
    const job: SubscriptionDeployJob = { tier: plan, stripeCustomerId: customerId, subscriptionId, userId: user.id }
    await tx.insert(subscriptionDeployOutbox).values({ sessionId: session.id, userId: user.id, job }).onConflictDoNothing()
    deps.deployKept?.({ sessionId: session.id, job })
  } else {
    log.warn('stripe.checkout_without_customer', { sessionId: session.id })
  }
  // A new plan with fewer agents than the one it replaces.
  if (mayLowerAccess(user, { plan, subscriptionStatus: 'active' })) deps.accessChanged?.(user.id)
  return 'applied'
}

async function grantCredits(tx: Db, session: Stripe.Checkout.Session, userId: string | null): Promise<Outcome> {
  if (session.payment_status !== 'paid') return 'unpaid'
  const pack = Number(session.metadata?.pack)
  if (!(pack in CREDIT_PACKS)) return 'invalid'
  const credits = CREDIT_PACKS[pack as CreditPack]
  const user = userId ? await lockUser(tx, { userId }) : undefined
  if (!user) return 'unknown_user'
  const [inserted] = await tx
    .insert(creditPurchases)
    .values({ paymentId: session.id, userId: user.id, pack, credits })
    .onConflictDoNothing()
    .returning({ paymentId: creditPurchases.paymentId })
  if (!inserted) return 'duplicate'
  await tx.update(users).set({ credits: sql`${users.credits} + ${credits}`, updatedAt: new Date() }).where(eq(users.id, user.id))
  return 'applied'
}

const WALLET = /^0x[0-9a-fA-F]{40}$/

/**
 * A paid top-up: the wallet and amount are the checkout's metadata, which only `GET /api/wallet/top-up` writes
 * (after proving the wallet); the amount must be one the route offers and what Stripe says was charged, in USD.
 */
async function fundWalletTopUp(tx: Db, deps: BillingDeps, session: Stripe.Checkout.Session, userId: string | null): Promise<Outcome> {
  if (session.payment_status !== 'paid') return 'unpaid'
  const wallet = session.metadata?.address ?? ''
  const amountCents = Number(session.metadata?.amountCents)
  const offered = (TOP_UP_AMOUNTS as readonly number[]).includes(amountCents)
  if (!WALLET.test(wallet) || !offered || session.amount_total !== amountCents || session.currency?.toLowerCase() !== 'usd') return 'invalid'
  const user = userId ? await lockUser(tx, { userId }) : undefined
  if (!user) return 'unknown_user'
  const funded = await creditCardTopUp(tx, {
    paymentId: session.id,
    userId: user.id,
    wallet,
    amountCents,
    chainId: BASE_CHAIN_ID,
    token: deps.config.PAYMENT_TOKEN_ADDRESS,
    decimals: deps.config.PAYMENT_TOKEN_DECIMALS,
  })
  if (!funded) return 'duplicate'
  log.info('stripe.wallet_topped_up', { sessionId: session.id, paymentSessionId: funded.sessionId, amountCents })
  return 'applied'
}

/**
 * `customer.subscription.created|updated|deleted`: status (Stripe's mapped; deleted is `canceled`), plan (the
 * subscription's `metadata.plan`, else its price mapped back through configuration, else unchanged) and period end
 * (none once canceled). The user is the subscription's customer, else its `metadata.userId` (a subscription event
 * can arrive before the checkout's). An event about another subscription than the user's current one changes
 * nothing, except `created` (a new subscription replaces the old).
 */
export async function applySubscription(tx: Db, deps: BillingDeps, sub: Stripe.Subscription, type: string, at: Date): Promise<Outcome> {
  const customerId = idOf(sub.customer)
  const user = await lockUser(tx, { customerId, userId: sub.metadata?.userId })
  if (!user) return 'unknown_user'
  if (user.subscriptionId && user.subscriptionId !== sub.id && type !== 'customer.subscription.created') return 'other_subscription'
  if (isStale(user, at)) return 'stale'
  const status = type === 'customer.subscription.deleted' ? 'canceled' : subscriptionStatusOf(sub.status)
  const price = sub.items?.data?.[0]?.price
  const plan = planNamed(sub.metadata?.plan) ?? planForPrice(deps.config, idOf(price))
  await tx
    .update(users)
    .set({
      subscriptionStatus: status,
      subscriptionId: sub.id,
      subscriptionPeriodEnd: status === 'canceled' ? null : periodEndOf(sub),
      subscriptionEventAt: at,
      updatedAt: new Date(),
      ...(plan && { plan }),
      ...(customerId && !user.stripeCustomerId && { stripeCustomerId: customerId }),
    })
    .where(eq(users.id, user.id))
  if (mayLowerAccess(user, { plan: plan ?? user.plan, subscriptionStatus: status })) deps.accessChanged?.(user.id)
  return 'applied'
}

/** The subscription an invoice bills: `parent.subscription_details` (API 2025-03-31 on), or the older top-level field. */
function invoiceSubscription(invoice: Stripe.Invoice) {
  const details = invoice.parent?.subscription_details
  const legacy = (invoice as unknown as { subscription?: string | { id: string } | null }).subscription
  return { subscriptionId: idOf(details?.subscription ?? legacy), metadata: details?.metadata ?? null }
}

/**
 * `invoice.paid` → `active` (period end from its subscription lines), `invoice.payment_failed` → `past_due`, for
 * the user's current subscription; an invoice of no subscription is ignored.
 */
export async function applyInvoice(tx: Db, deps: BillingDeps, invoice: Stripe.Invoice, type: string, at: Date): Promise<Outcome> {
  const { subscriptionId, metadata } = invoiceSubscription(invoice)
  if (!subscriptionId) return 'ignored'
  const customerId = idOf(invoice.customer)
  const user = await lockUser(tx, { customerId, userId: metadata?.userId })
  if (!user) return 'unknown_user'
  if (user.subscriptionId && user.subscriptionId !== subscriptionId) return 'other_subscription'
  if (isStale(user, at)) return 'stale'
  const paid = type === 'invoice.paid'
  const ends = (invoice.lines?.data ?? []).map((l) => l.period?.end).filter((n): n is number => typeof n === 'number')
  const plan = planNamed(metadata?.plan)
  await tx
    .update(users)
    .set({
      subscriptionStatus: paid ? 'active' : 'past_due',
      subscriptionId,
      subscriptionEventAt: at,
      updatedAt: new Date(),
      ...(paid && ends.length && { subscriptionPeriodEnd: fromUnix(Math.max(...ends)) }),
      ...(plan && { plan }),
      ...(customerId && !user.stripeCustomerId && { stripeCustomerId: customerId }),
    })
    .where(eq(users.id, user.id))
  if (mayLowerAccess(user, { plan: plan ?? user.plan, subscriptionStatus: paid ? 'active' : 'past_due' })) deps.accessChanged?.(user.id)
  return 'applied'
}
