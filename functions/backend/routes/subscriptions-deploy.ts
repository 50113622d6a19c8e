import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { eq, sql } from 'drizzle-orm'
import { requireSharedKey } from '../../../lib/auth/shared-key'
import { DEPLOY_TIERS, TIER_RESOURCES } from '../tiers'
import type { AppEnv } from '../../../lib/context'
import { asService } from '../../../lib/db/rls'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { limits } from '../../../lib/http/limits'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { log } from '../../../lib/log'
import { subscriptionDeployments, users } from '../../../schema'

const stripeId = (prefix: string, what: string) =>
  z.string().max(255).regex(new RegExp(`^${prefix}_[A-Za-z0-9]+$`), `${what} must be ${prefix}_ followed by letters and digits`)

const Body = z
  .object({
    tier: z.enum(DEPLOY_TIERS, { error: 'tier must be one of ' + DEPLOY_TIERS.join(', ') }),
    customerId: stripeId('cus', 'customerId').optional(),
    stripeCustomerId: stripeId('cus', 'stripeCustomerId').optional(),
    subscriptionId: stripeId('sub', 'subscriptionId').optional(),
    userId: z.string().max(255).optional().openapi({
      description: "The platform user the subscription is for, when the caller knows it (the Stripe webhook's job does: it may run before the webhook's own transaction commits the customer id); else found by the Stripe customer",
    }),
  })
  .refine((b) => b.customerId || b.stripeCustomerId, { message: 'customerId or stripeCustomerId required', path: ['customerId'] })
  .openapi('SubscriptionDeployRequest')

const Resources = z
  .object({
    memory: z.string().max(8).openapi({ example: '2GB', description: 'Runtime memory, in GB with the unit' }),
    cpus: z.number().int().min(1).max(64).openapi({ format: 'int32' }),
  })
  .openapi('SubscriptionResources')

export const route = createRoute(limitedRoute(limits.backend, {
  method: 'post',
  path: '/api/subscriptions/deploy',
  operationId: 'deploySubscription',
  tags: ['Billing'],
  summary: "Record a paid subscription's runtime tier (called by the Stripe webhook through the queue)",
  description:
    'Idempotent: keyed by `subscriptionId` (else the customer), a repeat answers the same and changes nothing new. ' +
    'Resources per tier: solo, starter, underground 2GB / 1 CPU; collective, pro 4GB / 2; label, scale 8GB / 4; ' +
    'network 16GB / 4; enterprise, white_glove 32GB / 8. The user is the one named by `userId`, else the one whose Stripe ' +
    'customer this is. This records the subscription\'s tier and resources; runtimes are created when the user provisions ' +
    '(`POST /api/provision`), sized by their plan.',
  middleware: [requireSharedKey],
  security: [{ sharedKey: [] }],
  request: { body: { content: { 'application/json': { schema: Body } }, required: true } },
  responses: {
    200: ok(
      z
        .object({
          success: z.literal(true),
          customerId: z.string().max(255),
          subscriptionId: z.string().max(255).nullable(),
          tier: z.enum(DEPLOY_TIERS),
          resources: Resources,
        })
        .openapi('SubscriptionDeploy'),
    ),
    400: errorResponse('Validation: tier, customer id or subscription id missing or malformed (`VALIDATION`)'),
    401: errorResponse('`Unauthorized`: no Bearer token'),
    403: errorResponse('`Forbidden`: not the shared key'),
    500: errorResponse('`Server misconfigured` (`INTERNAL_API_KEY` unset) or internal server error'),
  },
}))

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const body = c.req.valid('json')
  const customerId = (body.customerId ?? body.stripeCustomerId)!
  const subscriptionId = body.subscriptionId ?? null
  const { memoryGb, cpus } = TIER_RESOURCES[body.tier]
  const deployKey = subscriptionId ?? `customer:${customerId}`
  await asService(c.var.services.db, 'subscriptionDeploy', async (tx) => {
    const [owner] = await tx
      .select({ id: users.id })
      .from(users)
      .where(body.userId ? eq(users.id, body.userId) : eq(users.stripeCustomerId, customerId))
      .limit(1)
    await tx
      .insert(subscriptionDeployments)
      .values({ deployKey, customerId, subscriptionId, tier: body.tier, memoryGb, cpus, userId: owner?.id ?? null })
      .onConflictDoUpdate({
        target: subscriptionDeployments.deployKey,
        set: { tier: body.tier, memoryGb, cpus, userId: sql`coalesce(excluded.user_id, ${subscriptionDeployments.userId})`, updatedAt: sql`now()` },
      })
  })
  log.info('subscription.deploy', { tier: body.tier, hasSubscription: subscriptionId !== null })
  return c.json({ success: true as const, customerId, subscriptionId, tier: body.tier, resources: { memory: `${memoryGb}GB`, cpus } }, 200)
}
