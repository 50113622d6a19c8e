import { z } from '@hono/zod-openapi'
import { PLAN_NAMES, SUBSCRIPTION_STATUSES } from '../../lib/billing/plans'

/** A redirect's target, documented on every 303. */
export const redirectTo = (description: string) => ({
  description,
  headers: { Location: { description: 'Where the browser goes next', schema: { type: 'string' as const, format: 'uri', maxLength: 2048 } } },
})

export const VerifiedCheckoutSchema = z
  .object({
    plan: z.enum(PLAN_NAMES).openapi({ description: "The caller's plan as stored once the checkout is applied (`solo` when they have none)" }),
    status: z.enum(SUBSCRIPTION_STATUSES).openapi({
      description: "The caller's subscription status as stored once the checkout is applied: `active` after a plan checkout, unless a newer event (a cancellation) already moved it on",
    }),
    nextBilling: z
      .string()
      .max(64)
      .nullable()
      .openapi({ format: 'date-time', description: "End of the subscription's current period (the trial's end during the trial); null when unknown or not `active`/`past_due`" }),
    customerId: z.string().max(255).nullable().openapi({ description: 'The Stripe customer (`cus_...`)' }),
  })
  .openapi('VerifiedCheckout')

export const CheckoutUrlSchema = z
  .object({ url: z.string().max(2048).openapi({ format: 'uri', description: "Stripe Checkout's payment page" }) })
  .openapi('CheckoutUrl')

export const WebhookAckSchema = z
  .object({
    received: z.literal(true),
    outcome: z
      .enum(['applied', 'duplicate', 'stale', 'unpaid', 'unknown_user', 'other_subscription', 'ignored', 'logged', 'invalid'])
      .openapi({ description: 'What the event did (see the description)' }),
  })
  .openapi('StripeWebhookAck')

export const DeployJobSchema = z
  .object({
    tier: z.enum(PLAN_NAMES),
    stripeCustomerId: z.string().min(1).max(255),
    subscriptionId: z.string().max(255).nullable(),
    userId: z.string().min(1).max(64),
  })
  .openapi('SubscriptionDeployJob')

export const DeployResultSchema = z
  .object({
    ok: z.literal(true),
    deployed: z.boolean().openapi({ description: 'false when the backend refused the deploy for good (4xx): logged, not retried' }),
  })
  .openapi('SubscriptionDeployResult')
