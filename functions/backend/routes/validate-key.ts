import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { findApiKey } from '../../../lib/auth/api-keys'
import { bearerToken } from '../../../lib/auth/shared-key'
import { PLAN_NAMES, userPlan } from '../../../lib/billing/plans'
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
    'The key is the bearer token (`Authorization: Bearer sk_...`), never the body: a request without one is 401 ' +
    '`API_KEY_REQUIRED` (its message says so when the key came as `{"key": ...}` in a JSON body), a key that does ' +
    'not match is 401 `INVALID_API_KEY`. The web API\'s `POST /api/keys/validate` takes the key in the body instead. ' +
    'Answers the owner, their plan (as `GET /api/user` shows it: `solo` until a plan is bought; legacy names read as ' +
    'their plan) and what the plan unlocks.',
  security: [{ apiKey: [] }],
  responses: {
    200: ok(
      z
        .object({
          valid: z.literal(true),
          userId: z.string().max(255),
          plan: z.enum(PLAN_NAMES),
          features: z.array(z.string().max(1024)).max(64),
        })
        .openapi('ValidatedKey'),
    ),
    401: errorResponse('No bearer key: `API key required: send Authorization: Bearer sk_...` (`API_KEY_REQUIRED`); a wrong, unknown or revoked key: `Invalid API key` (`INVALID_API_KEY`)'),
    503: errorResponse('Database not configured'),
  },
}))

const REQUIRED = 'API key required: send Authorization: Bearer sk_...'

/** Whether the caller put the key in a JSON body (`{key}` or `{apiKey}`, as the web route takes it). */
async function keyInBody(c: Context): Promise<boolean> {
  try {
    const body: unknown = JSON.parse(await c.req.text())
    return !!body && typeof body === 'object' && ['key', 'apiKey'].some((k) => typeof (body as Record<string, unknown>)[k] === 'string')
  } catch {
    return false
  }
}

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const token = bearerToken(c.req.header('authorization'))
  if (!token) {
    const message = (await keyInBody(c)) ? `${REQUIRED} (the key in the body is not read)` : REQUIRED
    throw new ApiError('API_KEY_REQUIRED', message)
  }
  const found = await findApiKey(c.var.services.reader, token)
  if (!found) throw new ApiError('INVALID_API_KEY')
  const { id, plan } = found.user
  return c.json({ valid: true as const, userId: id, ...userPlan(plan) }, 200)
}
