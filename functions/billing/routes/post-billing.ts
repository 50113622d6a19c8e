import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { eq } from 'drizzle-orm'
import { PLAN_NAMES, normalizePlan } from '../../../lib/billing/plans'
import type { CreditPack } from '../../../lib/billing/stripe'
import { creditBalance, readUsage } from '../../../lib/billing/usage'
import { readAsUser } from '../../../lib/db/rls'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { limits } from '../../../lib/http/limits'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { signedInRoute } from '../../../lib/http/routes'
import { users } from '../../../schema'
import { buyCredits, createCheckout } from '../actions/checkout'
import { disableByok, enableByok } from '../actions/byok'
import { UsageWithResetSchema } from '../schemas'

const pack = z.union([z.literal(50), z.literal(200), z.literal(500)], { error: 'Invalid pack' })
const byokRequired = 'apiKey and provider are required'

const Body = z
  .discriminatedUnion(
    'action',
    [
      z.object({ action: z.literal('create-checkout'), plan: z.enum(PLAN_NAMES, { error: 'Invalid plan' }) }).openapi('CreateCheckout'),
      z
        .object({
          action: z.literal('enable-byok'),
          apiKey: z.string({ error: byokRequired }).trim().min(1, byokRequired).max(512),
          provider: z
            .string({ error: byokRequired })
            .trim()
            .toLowerCase()
            .min(1, byokRequired)
            .max(64)
            .regex(/^[a-z0-9][a-z0-9._-]*$/, 'provider must be a provider name such as openai or anthropic'),
        })
        .openapi('EnableByok'),
      z.object({ action: z.literal('disable-byok') }).openapi('DisableByok'),
      z.object({ action: z.literal('get-usage') }).openapi('GetUsage'),
      z
        .object({
          action: z.literal('buy-credits'),
          pack: pack.optional().openapi({ description: 'Credits pack: 50, 200 or 500' }),
          amount: pack.optional().openapi({ description: 'Alias of `pack`' }),
        })
        .refine((b) => b.pack !== undefined || b.amount !== undefined, { message: 'Invalid pack', path: ['pack'] })
        .openapi('BuyCredits'),
    ],
    { error: 'Invalid action' },
  )
  .openapi('BillingAction')

const Done = z.object({ success: z.literal(true), message: z.string().max(256) }).openapi('BillingDone')
const Answer = z
  .union([
    z.object({ url: z.string().max(2048).openapi({ format: 'uri', description: 'Stripe Checkout' }) }).openapi('CheckoutUrl'),
    Done,
    UsageWithResetSchema,
    z
      .object({
        success: z.literal(true),
        credits: z.number().int().min(1).max(1000).openapi({ format: 'int32' }),
        price: z.string().max(32).openapi({ example: '£5.00' }),
        url: z.string().max(2048).openapi({ format: 'uri', description: 'Stripe Checkout; credits are added once the payment is confirmed' }),
      })
      .openapi('CreditsCheckout'),
  ])
  .openapi('BillingActionResult')

export const route = signedInRoute(
  limitedRoute(limits.billingAction, {
    method: 'post',
    path: '/api/billing',
    operationId: 'billingAction',
    tags: ['Billing'],
    summary: 'Billing actions: create-checkout, enable-byok, disable-byok, get-usage, buy-credits',
    description:
      '`create-checkout` → `{url}` (subscription Checkout in GBP, with the 7-day trial only for a user who never had ' +
      'a subscription; 409 while the subscription is `active` or `past_due`); `enable-byok` stores the provider key ' +
      'encrypted (AES-GCM) and never returns it; `disable-byok` removes it; `get-usage` → today\'s units, `resetsAt` ' +
      '(next midnight UTC) and the credit balance (`credits`, `creditUnits`: 1 credit = 100 units, spent once the day\'s units are); `buy-credits` (`pack` or its alias `amount`: 50, 200, 500 → 5, 15, 30 credits) → ' +
      '`{success, credits, price, url}`: the credits are granted when Stripe confirms the payment (webhook), once. ' +
      'Prices are Stripe price ids from configuration, never from the request.',
    request: { body: { content: { 'application/json': { schema: Body } }, required: true } },
    responses: {
      200: ok(Answer),
      400: errorResponse('`Invalid action` (`INVALID_ACTION`); `Invalid plan`, `Invalid pack`, `apiKey and provider are required` (`VALIDATION`); invalid JSON'),
      409: errorResponse('`Already subscribed` (`CONFLICT`): `create-checkout` while the subscription is `active` or `past_due`'),
      500: errorResponse('`Checkout failed`: Stripe failed or unreachable, nothing stored (`PAYMENT_PROVIDER_UNAVAILABLE`); internal error'),
      503: errorResponse('`Stripe not configured` (`NOT_CONFIGURED`): no secret key or no price id for the plan or pack; or `Encryption not configured`'),
    },
  }),
)

export const handler: RouteHandler<typeof route> = async (c) => {
  const body = c.req.valid('json')
  switch (body.action) {
    case 'create-checkout':
      return c.json(await createCheckout(c, body.plan), 200)
    case 'buy-credits':
      return c.json(await buyCredits(c, (body.pack ?? body.amount) as CreditPack), 200)
    case 'enable-byok':
      return c.json(await enableByok(c, body.apiKey, body.provider), 200)
    case 'disable-byok':
      return c.json(await disableByok(c), 200)
    case 'get-usage': {
      const [user] = await readAsUser(c, (tx) =>
        tx.select({ plan: users.plan, credits: users.credits, creditUnits: users.creditUnits }).from(users).where(eq(users.id, c.var.user.id)),
      )
      return c.json({ ...(await readUsage(c.var.services.kv, c.var.user.id, normalizePlan(user?.plan))), ...creditBalance(user) }, 200)
    }
  }
}
