import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { eq } from 'drizzle-orm'
import type Stripe from 'stripe'
import { knownStatus, normalizePlan } from '../../../lib/billing/plans'
import { isStripeNotFound, stripeClient, stripeErrorFields } from '../../../lib/billing/stripe'
import { idOf, periodEndOf } from '../subscription'
import { applyVerifiedCheckout } from '../webhook'
import { readAsUser } from '../../../lib/db/rls'
import { ApiError } from '../../../lib/http/errors'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { log } from '../../../lib/log'
import { users } from '../../../schema'
import { VerifiedCheckoutSchema } from '../schemas'

const Query = z.object({
  session_id: z
    .string({ error: 'session_id required' })
    .min(1, 'session_id required')
    .max(255, 'Invalid session_id')
    .regex(/^cs_[A-Za-z0-9_]+$/, 'Invalid session_id')
    .openapi({ description: 'The Checkout Session id Stripe put in the success URL (`cs_...`)' }),
})

export const route = signedInRoute({
  method: 'get',
  path: '/api/checkout/verify',
  operationId: 'verifyCheckout',
  tags: ['Billing'],
  summary: 'Confirm a completed checkout and apply it',
  description:
    'Retrieves the Checkout Session from Stripe (with its subscription). It must be the caller\'s ' +
    '(`client_reference_id` and `metadata.userId`), `complete`, and paid (`paid`, or `no_payment_required` for a ' +
    'trial). Then applies it exactly as the webhook does (the same function, so a verify before or after the ' +
    'webhook gives one state): plan, status `active`, Stripe customer and subscription, and the runtime deploy ' +
    '(queued once per session, after the commit; one the queue refuses is published again by the deploy sweep, the answer ' +
    'unchanged); a credit pack is granted once per payment. An event newer than the checkout ' +
    'already applied (for instance a cancellation) is not undone. The answer is the caller\'s state as stored after ' +
    'that: `plan` and `status` (so `canceled`, not `active`, when the subscription was canceled since), `nextBilling` ' +
    'the end of the current period (the trial\'s end during the trial) while `active` or `past_due`, else null, and ' +
    '`customerId`. A credit pack\'s session changes no plan: it answers the same way, the caller\'s current plan ' +
    'and status (a user who never subscribed: `solo`, `inactive`); the credits show in `GET /api/billing`. A ' +
    'session id Stripe does not know is 404.',
  request: { query: Query },
  responses: {
    200: ok(VerifiedCheckoutSchema, 'The checkout is paid and applied'),
    400: errorResponse('Missing or malformed `session_id` (`VALIDATION`)'),
    402: errorResponse('The checkout is not complete or not paid (`PAYMENT_INCOMPLETE`)'),
    403: errorResponse("The checkout belongs to another user (`FORBIDDEN`)"),
    404: errorResponse('Stripe knows no such Checkout Session (`NOT_FOUND`)'),
    500: errorResponse('Stripe could not be reached or failed (`PAYMENT_PROVIDER_UNAVAILABLE`); nothing was changed'),
    503: errorResponse('Stripe not configured (`NOT_CONFIGURED`)'),
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const { session_id: sessionId } = c.req.valid('query')
  const { config, db, queue } = c.var.services
  const stripe = stripeClient(config)
  if (!stripe) throw new ApiError('NOT_CONFIGURED', 'Stripe not configured')
  let session: Stripe.Checkout.Session
  try {
    session = await stripe.checkout.sessions.retrieve(sessionId, { expand: ['subscription'] })
  } catch (e) {
    if (isStripeNotFound(e)) throw new ApiError('NOT_FOUND', 'Checkout session not found')
    log.error('stripe.verify_failed', { requestId: c.var.requestId, ...stripeErrorFields(e) })
    throw new ApiError('PAYMENT_PROVIDER_UNAVAILABLE')
  }
  const owner = session.client_reference_id ?? session.metadata?.userId
  const metadataOwner = session.metadata?.userId
  if (owner !== c.var.user.id || (metadataOwner && metadataOwner !== c.var.user.id)) {
    throw new ApiError('FORBIDDEN', 'Checkout session belongs to another user')
  }
  if (session.status !== 'complete' || session.payment_status === 'unpaid') {
    throw new ApiError('PAYMENT_INCOMPLETE')
  }
  await applyVerifiedCheckout(db, { config, queue }, session)
  // Answer what is stored now (the apply may have been stale, or the session a credit pack), not what it asked for.
  const [stored] = await readAsUser(c, (tx) =>
    tx
      .select({ plan: users.plan, status: users.subscriptionStatus, subscriptionId: users.subscriptionId, periodEnd: users.subscriptionPeriodEnd, customerId: users.stripeCustomerId })
      .from(users)
      .where(eq(users.id, c.var.user.id))
      .limit(1),
  )
  const status = knownStatus(stored?.status)
  const subscription = session.subscription && typeof session.subscription === 'object' ? session.subscription : null
  // The period end comes with the subscription's own events; until one is stored, this session's subscription has it.
  const sessionPeriodEnd = subscription && stored?.subscriptionId === subscription.id ? periodEndOf(subscription) : null
  const nextBilling = status === 'active' || status === 'past_due' ? (stored?.periodEnd ?? sessionPeriodEnd) : null
  return c.json(
    {
      plan: normalizePlan(stored?.plan),
      status,
      nextBilling: nextBilling?.toISOString() ?? null,
      customerId: stored?.customerId ?? idOf(session.customer),
    },
    200,
  )
}
