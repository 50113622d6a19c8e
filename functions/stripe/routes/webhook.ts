import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { createMiddleware } from 'hono/factory'
import type Stripe from 'stripe'
import { verifyWebhookEvent, WEBHOOK_TOLERANCE_SEC } from '../../../lib/billing/stripe'
import { HANDLED_EVENTS, processStripeEvent } from '../webhook'
import type { AppEnv } from '../../../lib/context'
import { ApiError } from '../../../lib/http/errors'
import { unavailableDependency } from '../../../lib/http/dependency'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { errorFields, log } from '../../../lib/log'
import { WebhookAckSchema } from '../schemas'

type WebhookEnv = AppEnv & { Variables: { stripeEvent: Stripe.Event } }

const INVALID = () => new ApiError('WEBHOOK_SIGNATURE_INVALID')

/**
 * The raw body against `Stripe-Signature` before anything else reads it (validation included): 503 without an
 * endpoint secret, 400 for a missing, forged or stale signature; the verified event for the handler.
 */
const verifyStripeSignature = createMiddleware<WebhookEnv>(async (c, next) => {
  const secret = c.var.services.config.STRIPE_WEBHOOK_SECRET
  if (!secret) throw new ApiError('NOT_CONFIGURED', 'Stripe webhook not configured')
  const signature = c.req.header('stripe-signature')
  if (!signature || signature.length > 4096) throw INVALID()
  const raw = await c.req.text()
  try {
    c.set('stripeEvent', await verifyWebhookEvent(raw, signature, secret))
  } catch (e) {
    log.warn('stripe.webhook_refused', { requestId: c.var.requestId, errorName: (e as Error)?.name })
    throw INVALID()
  }
  await next()
})

const EventSchema = z
  .object({
    id: z.string().max(255).openapi({ description: '`evt_...`' }),
    object: z.literal('event'),
    type: z.string().max(255),
    created: z.number().int().min(0).max(2 ** 40).openapi({ format: 'int64', description: 'Unix seconds (Stripe\'s clock)' }),
  })
  .openapi('StripeEvent', { description: 'A Stripe event (only the fields this service reads are listed)' })

export const route = createRoute({
  method: 'post',
  path: '/api/stripe/webhook',
  operationId: 'receiveStripeWebhook',
  security: [],
  tags: ['Billing'],
  summary: 'Receive a Stripe webhook event',
  description:
    `Called by Stripe. The raw body must carry a valid \`Stripe-Signature\` (HMAC-SHA256 with \`STRIPE_WEBHOOK_SECRET\`, ` +
    `timestamp at most ${WEBHOOK_TOLERANCE_SEC} s old); otherwise 400 and nothing is written. Each event is ` +
    'processed at most once: its id is recorded in the same transaction as its effect, so a redelivery (even ' +
    'concurrent) is 200 `duplicate` with no second effect, and a failure midway rolls everything back and answers ' +
    `500, so Stripe's retry processes it. Handled: ${HANDLED_EVENTS.map((t) => `\`${t}\``).join(', ')}. ` +
    'A completed checkout by its `metadata.kind`: `plan` sets the plan, status `active`, customer and subscription ' +
    'and keeps the runtime deploy in an outbox (in the same transaction), published to the queue once it commits (a queue ' +
    'that refuses it delays the deploy, not the plan: the deploy sweep publishes it again, and the answer is still 200); `credits` (paid) grants the pack once per payment; ' +
    '`wallet-top-up` (paid, the amount Stripe charged in USD equal to the metadata\'s) credits the wallet\'s prepaid gateway balance once per ' +
    'payment: its card-funded payment session (made on its first top-up), 1 USD per 100 cents, spent with vouchers like any session; ' +
    '`expert-setup` is logged. Subscription and invoice events move the status (Stripe\'s trialing/active → ' +
    '`active`, past_due → `past_due`, canceled/unpaid/incomplete_expired → `canceled` (paid access ends), incomplete/paused → ' +
    '`inactive`; `invoice.paid` → `active`, `invoice.payment_failed` → `past_due`, subscription deleted → ' +
    '`canceled`), the plan (subscription `metadata.plan`, else its price) and the period end, for the user whose ' +
    'Stripe customer it is (else `metadata.userId`). Events apply in Stripe\'s order: one older than the newest ' +
    'applied to the user is recorded as `stale` and changes nothing. An unknown user, another subscription than ' +
    "the user's current one, or another event type: 200, recorded, no effect. A change that may take paid access " +
    'away or lower the plan’s agent count (a status that does not pay, a plan with fewer agents) asks the watchdog, once ' +
    'committed, to reconcile the user at once: their runtimes stopped and agents suspended, or the newest beyond the plan.',
  middleware: [verifyStripeSignature] as const,
  request: {
    headers: z.object({ 'stripe-signature': z.string().max(4096).optional().openapi({ description: '`t=<unix>,v1=<hex HMAC>`' }) }),
    body: { required: true, content: { 'application/json': { schema: EventSchema } } },
  },
  responses: {
    200: ok(WebhookAckSchema, 'Processed, or recorded with no effect'),
    400: errorResponse('Missing, forged or stale signature (`WEBHOOK_SIGNATURE_INVALID`)'),
    500: errorResponse('Processing failed (`INTERNAL`): nothing was written; Stripe retries'),
    503: errorResponse('Stripe webhook not configured (`NOT_CONFIGURED`)'),
  },
})

export const handler: RouteHandler<typeof route, WebhookEnv> = async (c) => {
  const event = c.var.stripeEvent
  const { config, db, queue } = c.var.services
  let outcome
  try {
    outcome = await processStripeEvent(db, { config, queue }, event)
  } catch (e) {
    log.error('stripe.webhook_failed', { requestId: c.var.requestId, eventId: event.id, eventType: event.type, ...errorFields(e) })
    if (unavailableDependency(e)) throw e // 503 with Retry-After: Stripe sends it again
    throw new ApiError('INTERNAL', 'Webhook processing failed')
  }
  log.info('stripe.webhook', { requestId: c.var.requestId, eventId: event.id, eventType: event.type, outcome })
  return c.json({ received: true as const, outcome }, 200)
}
