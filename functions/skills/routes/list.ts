import { createRoute, type RouteHandler } from '@hono/zod-openapi'
import { readSession } from '../../../lib/auth/session'
import type { AppEnv } from '../../../lib/context'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { catalogFor } from '../listing'
import { CatalogQuery, CatalogSchema } from '../schemas'

export const route = createRoute({
  method: 'get',
  path: '/api/skills',
  operationId: 'listSkills',
  tags: ['Skills'],
  summary: 'The skills catalog',
  description:
    'No session needed; with one, `userRating` is the caller’s and `installedSkillIds` lists the skills enabled on ' +
    '`agentId` (one of the caller’s agents: its id, its runtime’s service id, or the caller’s instance id, their user ' +
    'id; any other id lists none). Filters: `category` (`all` or absent: every one), `featured=true`, `search` ' +
    '(case-insensitive, name or description). Ordered featured first, then most downloaded, then by name; paged by ' +
    '`limit` and `offset`. The platform’s own skills (`trusted`) are always in it. When the database cannot be read ' +
    'the answer is still 200: the default catalog (the platform’s skills, filtered alike) with downloads, installs and ' +
    'ratings 0, `userRating` null and no `installedSkillIds`.',
  security: [{ session: [] }, {}] as { session?: string[] }[],
  request: { query: CatalogQuery },
  responses: {
    200: ok(CatalogSchema),
    400: errorResponse('A query parameter is invalid (`VALIDATION`)'),
  },
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const q = c.req.valid('query')
  // The session is optional: a database that cannot look it up makes the caller anonymous, not the catalog fail.
  const user = await readSession(c).catch(() => null)
  const category = q.category?.trim().toLowerCase()
  const catalog = await catalogFor(
    c.var.services,
    user?.id ?? null,
    {
      category: category && category !== 'all' ? category : undefined,
      featuredOnly: q.featured === 'true',
      search: q.search?.trim() || undefined,
      limit: q.limit,
      offset: q.offset,
    },
    q.agentId,
  )
  return c.json(catalog, 200)
}
