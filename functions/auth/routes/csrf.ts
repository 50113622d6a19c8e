import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { issueCsrfToken, requireSessionSecret } from '../../../lib/auth/csrf'
import type { AppEnv } from '../../../lib/context'
import { noStore } from '../../../lib/http/no-store'
import { errorResponse, ok } from '../../../lib/http/openapi'

export const route = createRoute({
  method: 'get',
  path: '/api/auth/csrf',
  operationId: 'getCsrfToken',
  security: [],
  middleware: [noStore] as const,
  tags: ['Auth'],
  summary: 'Get a CSRF token',
  description:
    'Put `header` (`{token}:{signed}`) in `x-csrf-token` or `x-xsrf-token`. `signed` is the HMAC-SHA256 of `token` ' +
    'under `SESSION_SECRET`; `token` carries its issue time and is good for 2 hours.',
  responses: {
    200: ok(z.object({ token: z.string().max(8192), signed: z.string().max(1024), header: z.string().max(1024) }).openapi('CsrfToken')),
    500: errorResponse('`SESSION_SECRET` not configured'),
  },
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const secret = requireSessionSecret(c.var.services.config.sessionSecret)
  return c.json(await issueCsrfToken(secret), 200)
}
