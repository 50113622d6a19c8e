import type { RouteHandler } from '@hono/zod-openapi'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { jsonBody } from '../../../lib/http/validation'
import { rateSkill } from '../queries'
import { skillRoute } from '../route'
import { RatingBody, RatingResultSchema, SkillIdParams } from '../schemas'

export const route = skillRoute(limits.skillRating, {
  method: 'post',
  path: '/api/skills/{skillId}/rating',
  operationId: 'rateSkill',
  tags: ['Skills'],
  summary: 'Rate a skill from 1 to 5',
  description:
    'One rating per user per skill: rating again replaces the caller’s earlier rating. The skill’s average (to one ' +
    'decimal) and count move in the same transaction as the rating, under the skill’s row lock, so concurrent ratings ' +
    'all count exactly once.',
  request: { params: SkillIdParams, body: jsonBody(RatingBody) },
  responses: {
    200: ok(RatingResultSchema),
    400: errorResponse('`rating must be an integer from 1 to 5` (`VALIDATION`); or invalid JSON (`INVALID_JSON`)'),
    404: errorResponse('`Skill not found` (`NOT_FOUND`)'),
    500: errorResponse('Unexpected failure (`INTERNAL`)'),
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const { skillId } = c.req.valid('param')
  const { rating } = c.req.valid('json')
  const result = await rateSkill(c.var.services.db, c.var.user.id, skillId, rating)
  return c.json({ success: true as const, skillId, userRating: rating, ...result }, 200)
}
