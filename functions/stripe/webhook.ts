import { eq } from 'drizzle-orm'
import type Stripe from 'stripe'
import type { Db } from '../../lib/db/rls'
import { asService } from '../../lib/db/rls'
import { stripeEvents } from '../../schema'
import { errorFields, log } from '../../lib/log'
import { WATCHDOG_PATH } from '../../lib/watchdog/deps'
import { applyCheckout, applyInvoice, applySubscription, type BillingDeps, type Outcome } from './subscription'
import { type PendingDeploy, publishDeploys } from './deploy-outbox'

/** The Stripe event types this service acts on; any other is recorded and acknowledged. */
export const HANDLED_EVENTS = [
  'checkout.session.completed',
  'checkout.session.async_payment_succeeded',
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.deleted',
  'invoice.paid',
  'invoice.payment_failed',
] as const

/** One event's effect, inside the transaction that records it. */
function applyEvent(tx: Db, deps: BillingDeps, event: Stripe.Event): Promise<Outcome> {
  const at = new Date(event.created * 1000)
  switch (event.type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded':
      return applyCheckout(tx, deps, event.data.object, at)
    case 'customer.subscription.created':
    case 'customer.subscription.updated':
    case 'customer.subscription.deleted':
      return applySubscription(tx, deps, event.data.object, event.type, at)
    case 'invoice.paid':
    case 'invoice.payment_failed':
      return applyInvoice(tx, deps, event.data.object, event.type, at)
    default:
      return Promise.resolve('ignored')
  }
}

/**
 * A verified event, processed at most once: its `stripe_events` row is inserted first, in the same transaction
 * as its effect. A redelivery finds the row (a concurrent one waits on the first's insert, then finds it) and
 * changes nothing: `duplicate`. Any failure rolls the row back with the effect, so Stripe's retry processes it. A
 * plan checkout's deploy, kept in its outbox by the same transaction, is published after the commit (one the queue
 * refuses stays there for the deploy sweep: functions/stripe/deploy-outbox.ts).
 */
export async function processStripeEvent(db: Db, deps: BillingDeps, event: Stripe.Event): Promise<Outcome> {
  const changed = new Set<string>()
  const deploys: PendingDeploy[] = []
  const outcome = await asService(db, 'stripeWebhook', async (tx) => {
    const [fresh] = await tx
      .insert(stripeEvents)
      .values({ id: event.id, type: event.type, createdAt: new Date(event.created * 1000), outcome: 'processing' })
      .onConflictDoNothing()
      .returning({ id: stripeEvents.id })
    if (!fresh) return 'duplicate' as const
    const outcome = await applyEvent(tx, { ...deps, accessChanged: (userId) => changed.add(userId), deployKept: (d) => deploys.push(d) }, event)
    await tx.update(stripeEvents).set({ outcome }).where(eq(stripeEvents.id, event.id))
    return outcome
  })
  await publishDeploys(db, deps.queue, deploys)
  if (changed.size) await reconcileSoon(deps, [...changed])
  return outcome
}

/**
 * A committed change that may take paid access away (a subscription canceled, a lower plan): the watchdog
 * reconciles those users now rather than at its next sweep (functions/cron/watchdog/reconcile.ts). Published after the commit,
 * so the reconciliation reads the new state; best effort, since the sweep reconciles within one interval anyway.
 */
async function reconcileSoon(deps: BillingDeps, userIds: string[]) {
  try {
    await deps.queue.publish(WATCHDOG_PATH, { userIds }, { retries: 3 })
  } catch (e) {
    log.error('stripe.reconcile_publish_failed', { users: userIds.length, ...errorFields(e) })
  }
}

/** A completed checkout's effect outside any event (checkout verify): the same function, at the session's creation. */
export async function applyVerifiedCheckout(db: Db, deps: BillingDeps, session: Stripe.Checkout.Session): Promise<Outcome> {
  const deploys: PendingDeploy[] = []
  const outcome = await asService(db, 'stripeWebhook', (tx) =>
    applyCheckout(tx, { ...deps, deployKept: (d) => deploys.push(d) }, session, new Date(session.created * 1000), 'verify'),
  )
  await publishDeploys(db, deps.queue, deploys)
  return outcome
}
