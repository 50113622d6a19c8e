import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { createExpertSetupCheckout, stripeClient, stripeErrorFields } from '../../../lib/billing/stripe'
import type { AppEnv } from '../../../lib/context'
import { ApiError } from '../../../lib/http/errors'
import { emailField } from '../../../lib/http/fields'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { log } from '../../../lib/log'
import { CheckoutUrlSchema } from '../schemas'

const DAY_MS = 24 * 60 * 60 * 1000

/** A real calendar day, `YYYY-MM-DD`, from yesterday (UTC: the buyer may be behind it) to a year ahead. */
const bookableDay = (value: string) => {
  const day = Date.parse(`${value}T00:00:00Z`)
  if (Number.isNaN(day) || new Date(day).toISOString().slice(0, 10) !== value) return false
  const today = Date.parse(new Date().toISOString().slice(0, 10))
  return day >= today - DAY_MS && day <= today + 366 * DAY_MS
}

const Query = z.object({
  date: z
    .string({ error: 'date required' })
    .min(1, 'date required')
    .max(10, 'Invalid date')
    .regex(/^\d{4}-\d{2}-\d{2}$/, 'Invalid date')
    .refine(bookableDay, 'Invalid date')
    .openapi({ description: 'The session day, `YYYY-MM-DD` (from yesterday UTC to a year ahead)', example: '2026-06-01' }),
  time: z
    .string({ error: 'time required' })
    .min(1, 'time required')
    .max(5, 'Invalid time')
    .regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'Invalid time')
    .openapi({ description: 'The session start, `HH:MM` (24 h)', example: '14:00' }),
  email: emailField().openapi({ description: 'Where Stripe sends the receipt' }),
})

export const route = createRoute(
  limitedRoute(limits.expertSetupCheckout, {
    method: 'get',
    path: '/api/stripe/expert-setup-checkout',
    operationId: 'startExpertSetupCheckout',
    security: [],
    tags: ['Billing'],
    summary: 'Book an expert setup: a one-time Stripe Checkout',
    description:
      'No session needed. Creates a one-time (mode `payment`) Stripe Checkout Session for the expert setup price ' +
      '(49 GBP, `STRIPE_PRICE_EXPERT_SETUP`) with the buyer\'s email and the chosen `date` and `time` in its ' +
      'metadata (`kind: expert-setup`), and answers its `url`. After payment Stripe sends the browser to ' +
      '`{base_url}/expert-setup/success`, on cancel to `{base_url}/pricing?cancelled=1`; the paid booking reaches ' +
      'the service through the webhook.',
    request: { query: Query },
    responses: {
      200: ok(CheckoutUrlSchema, 'The payment page'),
      400: errorResponse('A missing or invalid `date`, `time` or `email` (`VALIDATION`)'),
      500: errorResponse('Stripe not configured (`MISCONFIGURED`), or Stripe refused or did not answer (`PAYMENT_PROVIDER_UNAVAILABLE`)'),
    },
  }),
)

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { date, time, email } = c.req.valid('query')
  const { config } = c.var.services
  const stripe = stripeClient(config)
  const priceId = config.STRIPE_PRICE_EXPERT_SETUP
  if (!stripe || !priceId) throw new ApiError('MISCONFIGURED', 'Stripe not configured')
  try {
    const session = await createExpertSetupCheckout(stripe, config, { date, time, email: email.toLowerCase() }, priceId)
    if (!session.url) throw new Error('Checkout Session without a url')
    return c.json({ url: session.url }, 200)
  } catch (e) {
    log.error('stripe.expert_setup_checkout_failed', { requestId: c.var.requestId, ...stripeErrorFields(e) })
    throw new ApiError('PAYMENT_PROVIDER_UNAVAILABLE')
  }
}
