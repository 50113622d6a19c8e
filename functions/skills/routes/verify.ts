import { createRoute, type RouteHandler, z } from '@hono/zod-openapi'
import { requireAdminSession } from '../../../lib/auth/session'
import type { AppEnv } from '../../../lib/context'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { jsonBody } from '../../../lib/http/validation'
import { reviewSkill } from '../queries'
import { scanSkill } from '../scan/index'
import { BlockedSchema, ScanSchema, VerifyBody } from '../schemas'

export const route = createRoute(
  limitedRoute(limits.skillVerify, {
    method: 'post',
    path: '/api/skills/verify',
    operationId: 'verifySkill',
    tags: ['Skills'],
    summary: 'Scan a skill without publishing it, or (an admin) verify a stored one',
    description:
      'No session needed: the scan `POST /api/skills` runs; nothing is stored; `author`, `featured` and `sourceUrl` never ' +
      'raise the tier. With `skillId`, an admin (verified email in `ADMIN_EMAILS`) reviews that stored skill: its code is ' +
      'scanned again and, unless blocked, it becomes `verified`, no manual review pending (warnings and risk as found).',
    security: [{}, { session: [] }] as { session?: string[] }[],
    request: { body: jsonBody(VerifyBody) },
    responses: {
      200: ok(z.object({ scan: ScanSchema }).openapi('SkillVerification')),
      400: {
        description:
          '`name` is missing (without `skillId`) or a field is too long (`VALIDATION`); invalid JSON (`INVALID_JSON`); or ' +
          'the reviewed skill is blocked by the scan, with `scan` (`SKILL_BLOCKED`)',
        content: { 'application/json': { schema: BlockedSchema } },
      },
      401: errorResponse('`skillId` without a session (`UNAUTHORIZED`)'),
      403: errorResponse('`skillId` from a user who is not an admin (`ADMIN_REQUIRED`), or from a foreign `Origin` (`ORIGIN_NOT_ALLOWED`)'),
      404: errorResponse('`skillId` names no skill (`NOT_FOUND`)'),
      500: errorResponse('Unexpected failure (`INTERNAL`)'),
    },
  }),
)

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const body = c.req.valid('json')
  if (body.skillId === undefined) return c.json({ scan: scanSkill(body) }, 200)
  // The admin gate of admin routes, run here: only a review changes anything.
  await (requireAdminSession as unknown as (c: unknown, next: () => Promise<void>) => Promise<void>)(c, async () => {})
  return c.json({ scan: await reviewSkill(c.var.services.db, body.skillId, c.var.user!.id) }, 200)
}
