import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { PLAN_NAMES, type PlanName } from '../../../lib/billing/plans'
import { alreadySubscribed, createPlanCheckout, planPriceId, readBuyer, stripeClient, stripeErrorFields } from '../../../lib/billing/stripe'
import type { AppContext } from '../../../lib/context'
import { signedInRoute } from '../../../lib/http/routes'
import { log } from '../../../lib/log'
import { redirectTo } from '../schemas'

const Query = z.object({
  plan: z.string().max(32).optional().openapi({ description: 'One of `solo`, `collective`, `label`, `network`' }),
})

export const route = signedInRoute({
  method: 'get',
  path: '/api/stripe/checkout',
  operationId: 'startPlanCheckout',
  tags: ['Billing'],
  summary: 'Start a plan subscription: redirect to Stripe Checkout',
  description:
    'Every answer but the 401 is a 303 redirect. To Stripe Checkout for the monthly GBP price of `plan` (29, 69, 149, ' +
    '499) with a 7-day trial (only for a user who never had a subscription), for the signed-in user (`client_reference_id`; their Stripe customer when they have ' +
    'one, else their email); after payment Stripe sends the browser to ' +
    '`{base_url}/checkout/success?session_id={CHECKOUT_SESSION_ID}&plan=<plan>`, on cancel to ' +
    '`{base_url}/pricing?cancelled=1`. Otherwise to `{base_url}/pricing?error=invalid_plan` (missing or unknown ' +
    'plan), `{base_url}/onboard?plan=<plan>&paid=1&admin=1` (admins bypass payment; Stripe is not called), ' +
    '`{base_url}/pricing?error=stripe_not_configured` (no secret key or no price for the plan), ' +
    '`{base_url}/pricing?error=already_subscribed` (the user\'s subscription is `active` or `past_due`: no second ' +
    'subscription; Stripe is not called) or ' +
    '`{base_url}/pricing?error=checkout_failed` (Stripe refused or did not answer). The plan is applied by the ' +
    'webhook or `GET /api/checkout/verify`, never by this redirect.',
  request: { query: Query },
  responses: {
    303: redirectTo('To Stripe Checkout, or to the dashboard page the description lists'),
  },
})

const isPlan = (plan: string | undefined): plan is PlanName => !!plan && (PLAN_NAMES as string[]).includes(plan)

const toDashboard = (c: AppContext, path: string) => {
  return c.redirect(`${c.var.services.config.baseUrl}${path}`, 303)
}

/** A malformed query (an over-long plan) is an invalid plan too: a redirect, never JSON. */
export const hook = (result: { success: boolean }, c: AppContext) =>
  result.success ? undefined : toDashboard(c, '/pricing?error=invalid_plan')

export const handler: RouteHandler<typeof route> = async (c) => {
  const { plan } = c.req.valid('query')
  const { config } = c.var.services
  const user = c.var.user
  if (!isPlan(plan)) return toDashboard(c, '/pricing?error=invalid_plan')
  if (user.isAdmin) return toDashboard(c, `/onboard?plan=${plan}&paid=1&admin=1`)
  const stripe = stripeClient(config)
  const priceId = planPriceId(config, plan)
  if (!stripe || !priceId) return toDashboard(c, '/pricing?error=stripe_not_configured')
  const buyer = await readBuyer(c)
  if (alreadySubscribed(buyer)) return toDashboard(c, '/pricing?error=already_subscribed')
  try {
    const session = await createPlanCheckout(stripe, config, buyer, plan, priceId)
    if (!session.url) throw new Error('Checkout Session without a url')
    return c.redirect(session.url, 303)
  } catch (e) {
    log.error('stripe.checkout_failed', { requestId: c.var.requestId, plan, ...stripeErrorFields(e) })
    return toDashboard(c, '/pricing?error=checkout_failed')
  }
}
