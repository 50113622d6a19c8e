import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { eq } from 'drizzle-orm'
import { requirePlanMatch } from '../../../lib/auth/plan'
import { openByokKey } from '../../../lib/billing/byok'
import { PLAN_NAMES } from '../../../lib/billing/plans'
import { readUsage } from '../../../lib/billing/usage'
import type { AppEnv } from '../../../lib/context'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { countField } from '../../../lib/http/fields'
import { limits } from '../../../lib/http/limits'
import { describeLimit, limitedRoute, rateLimit } from '../../../lib/http/rate-limit'
import { providerKeys } from '../../../schema'
import { IDENTITY_OR_KEY_NOTE, identityOrKey, identityOrKeyDocs } from '../identity-or-key'

const PlanHeaders = z.object({
  'x-user-plan': z.string().max(32).optional().openapi({ description: 'The plan the web tier believes the caller is on; checked against the stored record' }),
  'x-subscription-id': z.string().max(255).optional().openapi({ description: 'The subscription id the web tier holds; checked against the stored record' }),
})

export const route = createRoute(limitedRoute(limits.backend, {
  method: 'get',
  path: '/api/ai/usage',
  operationId: 'getAiUsage',
  tags: ['AI'],
  summary: "The caller's AI plan and today's usage units",
  description:
    'Every `/api/ai/*` route runs the plan check first (spec "Authentication" 7): `x-user-plan` and ' +
    '`x-subscription-id`, when sent, must match the stored record (402 `SUBSCRIPTION_MISMATCH`); the deprecated ' +
    '`free` plan, and no paid plan once the 7-day trial is over, are 402 `PLAN_REQUIRED`; verified admins bypass. ' +
    `Units reset at midnight UTC; with BYOK the caller's own key pays, so units are counted, not capped (\`byokEnabled\` only for a stored key this server can open: one sealed under a key it no longer has reads as not set). ${IDENTITY_OR_KEY_NOTE}`,
  // Both of the spec's limits: every backend /api route's, then the stricter AI one (whose RateLimit-* headers the answer carries).
  middleware: [rateLimit(limits.ai), identityOrKey, requirePlanMatch],
  ...identityOrKeyDocs,
  request: { headers: PlanHeaders },
  responses: {
    200: ok(
      z
        .object({
          plan: z.enum(PLAN_NAMES),
          byokEnabled: z.boolean(),
          dailyUnits: countField(),
          used: countField(),
          remaining: countField(),
          resetsAt: z.string().max(64).openapi({ format: 'date-time' }),
        })
        .openapi('AiUsage'),
    ),
    401: errorResponse('`Invalid API key`, or identity headers unsigned (`SIGNATURE_REQUIRED`) or badly signed (`INVALID_SIGNATURE`)'),
    402: errorResponse('`Subscription mismatch` (`SUBSCRIPTION_MISMATCH`) or `Paid plan required` (`PLAN_REQUIRED`)'),
    // Every `/api/ai/*` route's own limit, before the backend's.
    429: errorResponse(`Over ${describeLimit(limits.ai)}: \`${limits.ai.message}\` (\`RATE_LIMITED\`)`),
  },
}))

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const me = c.var.identity!.userId
  const plan = c.var.plan!
  const [key] = await c.var.services.reader.asUser(me, (tx) =>
    tx.select({ keyId: providerKeys.keyId, sealed: providerKeys.sealed }).from(providerKeys).where(eq(providerKeys.userId, me)),
  )
  // Enabled only with a key that opens: one sealed under a key this server no longer has reads as not set.
  const byokEnabled = (await openByokKey(c.var.services.config, me, key)) !== null
  return c.json({ plan, byokEnabled, ...(await readUsage(c.var.services.kv, me, plan)) }, 200)
}
