import { createRoute, type RouteHandler } from '@hono/zod-openapi'
import { z } from '@hono/zod-openapi'
import type { AppEnv } from '../../../lib/context'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { jsonBody } from '../../../lib/http/validation'
import { scanSkill } from '../../../lib/skills/scan'
import { ScanSchema, VerifyBody } from '../schemas'

export const route = createRoute(
  limitedRoute(limits.skillVerify, {
    method: 'post',
    path: '/api/skills/verify',
    operationId: 'verifySkill',
    tags: ['Skills'],
    summary: 'Scan a skill without publishing it',
    description:
      'No session needed. The same scan `POST /api/skills` runs, on the same field limits; nothing is stored. `author` ' +
      'and `featured` are accepted and never raise the tier: `trusted` is reserved for the platform’s own skills.',
    security: [],
    request: { body: jsonBody(VerifyBody) },
    responses: {
      200: ok(z.object({ scan: ScanSchema }).openapi('SkillVerification')),
      400: errorResponse('`name` is missing or a field is too long (`VALIDATION`); or invalid JSON (`INVALID_JSON`)'),
      500: errorResponse('Unexpected failure (`INTERNAL`)'),
    },
  }),
)

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const body = c.req.valid('json')
  return c.json({ scan: scanSkill({ code: body.code, description: body.description, sourceUrl: body.sourceUrl }) }, 200)
}
