import type { RouteHandler } from '@hono/zod-openapi'
import { eq } from 'drizzle-orm'
import { openByokKey } from '../../../lib/billing/byok'
import { PLAN_NAMES, PLANS, knownStatus, normalizePlan } from '../../../lib/billing/plans'
import { monthlyPrice } from '../../../lib/billing/stripe'
import { creditBalance, readUsage } from '../../../lib/billing/usage'
import { readAsUser } from '../../../lib/db/rls'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { providerKeys, users } from '../../../schema'
import { BillingSchema } from '../schemas'

export const route = signedInRoute({
  method: 'get',
  path: '/api/billing',
  operationId: 'getBilling',
  tags: ['Billing'],
  summary: "The plans, the caller's plan and subscription, BYOK state, credits and today's usage",
  description:
    "`usage` is today's allowance (it returns at midnight UTC); once it is spent, calls are paid from credits, 1 credit = " +
    '100 units, taken unit by unit (`creditUnits` is the balance in units, `credits` the whole credits in it). When both ' +
    'are spent, a paid call is refused (`USAGE_LIMIT`, or the gateway\'s 402).',
  responses: {
    200: ok(BillingSchema),
    500: errorResponse('Internal server error'),
  },
})

const plans = Object.fromEntries(
  PLAN_NAMES.map((name) => {
    const { agents, memoryGb, cpus, monthlyGbp, dailyUnits, features } = PLANS[name]
    return [name, { agents, memoryGb, cpus, monthlyPrice: monthlyGbp, currency: 'GBP' as const, price: monthlyPrice(name), dailyUnits, features: [...features] }]
  }),
) as Record<(typeof PLAN_NAMES)[number], { agents: number; memoryGb: number; cpus: number; monthlyPrice: number; currency: 'GBP'; price: string; dailyUnits: number; features: string[] }>

export const handler: RouteHandler<typeof route> = async (c) => {
  const me = c.var.user.id
  // One statement: the caller's row and their key (never answered: only whether it opens, and its provider).
  const [user] = await readAsUser(c, (tx) =>
    tx
      .select({ plan: users.plan, status: users.subscriptionStatus, credits: users.credits, creditUnits: users.creditUnits, provider: providerKeys.provider, keyId: providerKeys.keyId, sealed: providerKeys.sealed })
      .from(users)
      .leftJoin(providerKeys, eq(providerKeys.userId, users.id))
      .where(eq(users.id, me)),
  )
  const deprecated = user?.plan === 'free'
  const plan = normalizePlan(user?.plan)
  const { dailyUnits, used, remaining } = await readUsage(c.var.services.kv, me, plan)
  // A key this server can no longer open is as good as none: BYOK reads as not set until enabled again.
  const byok = user?.provider && (await openByokKey(c.var.services.config, me, user)) !== null ? user.provider : null
  return c.json(
    {
      plans,
      currentPlan: deprecated ? ('free' as const) : plan,
      deprecated,
      subscriptionStatus: knownStatus(user?.status ?? 'inactive'),
      byokEnabled: byok !== null,
      byokProvider: byok,
      ...creditBalance(user),
      usage: { dailyUnits, used, remaining },
    },
    200,
  )
}
