import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { findApiKey } from '../../../lib/auth/api-keys'
import { bearerToken } from '../../../lib/auth/shared-key'
import { normalizePlan, PLAN_NAMES, type PlanName, planFeatures } from '../../../lib/billing/plans'
import type { AppEnv } from '../../../lib/context'
import { ApiError } from '../../../lib/http/errors'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { limits } from '../../../lib/http/limits'
import { limitedRoute } from '../../../lib/http/rate-limit'

export const route = createRoute(limitedRoute(limits.backend, {
  method: 'post',
  path: '/api/validate-key',
  operationId: 'validateUserApiKey',
  tags: ['Keys'],
  summary: 'Validate a user API key',
  description:
    'The key is the bearer token (`Authorization: Bearer sk_...`). Answers the owner, their plan (legacy names ' +
    'and an unset plan read as one of the four plans; unset is `solo`) and what the plan unlocks.',
  security: [{ apiKey: [] }],
  responses: {
    200: ok(
      z
        .object({
          valid: z.literal(true),
          userId: z.string().max(255),
          plan: z.enum(PLAN_NAMES as [PlanName, ...PlanName[]]),
          features: z.array(z.string().max(1024)).max(64),
        })
        .openapi('ValidatedKey'),
    ),
    401: errorResponse('Missing or invalid API key: `{error: "Invalid API key"}`'),
    503: errorResponse('Database not configured'),
  },
}))

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const token = bearerToken(c.req.header('authorization'))
  const found = token ? await findApiKey(c.var.services.reader, token) : null
  if (!found) throw new ApiError(401, 'Invalid API key', { code: 'INVALID_API_KEY' })
  const { id, plan } = found.user
  return c.json({ valid: true as const, userId: id, plan: normalizePlan(plan), features: planFeatures(plan) }, 200)
}
