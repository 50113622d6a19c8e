import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { API_KEY_PREFIX, findApiKey } from '../../../lib/auth/api-keys'
import { verifySecret } from '../../../lib/auth/password'
import { PLAN_NAMES, userPlan } from '../../../lib/billing/plans'
import type { AppEnv } from '../../../lib/context'
import { ApiError } from '../../../lib/http/errors'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { describeLimit, limitedRoute } from '../../../lib/http/rate-limit'
import { jsonBody } from '../../../lib/http/validation'

/** Per client IP: enough for a service checking keys, too few to guess one. */

const ValidateBody = z
  .object(
    {
      apiKey: z
        .string({ error: (iss) => (iss.input === undefined ? 'apiKey is required' : 'apiKey must be a string') }).max(8192)
        .openapi({ description: 'The raw key, `sk_...`', example: `${API_KEY_PREFIX}…` }),
    },
    { error: 'Request body must be a JSON object' },
  )
  .openapi('ValidateApiKey')

const ValidResultSchema = z
  .object({
    valid: z.literal(true),
    userId: z.string().max(255),
    email: z.string().max(254),
    plan: z.enum(PLAN_NAMES).openapi({
      description: 'The plan the owner is on, as `GET /api/user` shows it: `solo` until a plan is bought; legacy names read as their plan',
    }),
    subscriptionStatus: z.string().max(1024),
    features: z.array(z.string().max(1024)).max(64).openapi({ description: "The plan's features" }),
  })
  .openapi('ApiKeyValidation')

export const route = createRoute(limitedRoute(limits.apiKeyValidate, {
  method: 'post',
  path: '/api/keys/validate',
  operationId: 'validateApiKey',
  security: [],
  tags: ['API keys'],
  summary: 'Check an API key and say whose it is',
  description: `No session needed. Rate-limited to ${describeLimit(limits.apiKeyValidate)}.`,
  request: { body: jsonBody(ValidateBody) },
  responses: {
    200: ok(ValidResultSchema, 'The key is valid'),
    400: errorResponse('`apiKey` missing or not a string (`VALIDATION`); or invalid JSON'),
    401: errorResponse('`Invalid API key`: wrong prefix, unknown, revoked or not matching'),
  },
}))

const invalid = () => new ApiError('INVALID_API_KEY')

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { apiKey } = c.req.valid('json')
  if (!apiKey.startsWith(API_KEY_PREFIX)) throw invalid()
  // Runs as the service: no caller is known until the key matches. SHA-256 finds it; bcrypt (the web-side scheme) confirms it.
  const match = await findApiKey(c.var.services.reader, apiKey)
  if (!match || !(await verifySecret(apiKey, match.key.keyHash))) throw invalid()
  const { user } = match
  return c.json(
    {
      valid: true as const,
      userId: user.id,
      email: user.email,
      ...userPlan(user.plan),
      subscriptionStatus: user.subscriptionStatus,
    },
    200,
  )
}
