import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import type { AppEnv } from '../../../lib/context'
import { ok } from '../../../lib/http/openapi'

export const FALLBACK_VERSION = 'v0.0.0'

export const route = createRoute({
  method: 'get',
  path: '/api/version',
  operationId: 'getVersion',
  security: [],
  tags: ['Health'],
  summary: 'Platform version',
  description: '`APP_VERSION`, else `v0.0.0`. Cached for an hour.',
  responses: { 200: ok(z.object({ version: z.string().max(1024) }).openapi('Version')) },
})

export const handler: RouteHandler<typeof route, AppEnv> = (c) => {
  c.header('Cache-Control', 'max-age=3600, stale-while-revalidate=3600')
  return c.json({ version: c.var.services.config.APP_VERSION ?? FALLBACK_VERSION }, 200)
}
