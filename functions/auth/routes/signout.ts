import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { getCookie } from 'hono/cookie'
import { assertTrustedOrigin, endSession, SESSION_COOKIE } from '../../../lib/auth/session'
import type { AppEnv } from '../../../lib/context'
import { errorResponse, ok } from '../../../lib/http/openapi'

export const route = createRoute({
  method: 'post',
  path: '/api/auth/signout',
  operationId: 'signOut',
  security: [],
  tags: ['Auth'],
  summary: 'Sign out',
  description:
    'Deletes the session and clears the cookie; 200 even without a session. What the session opened closes with ' +
    'it: its permission sockets (close code 4401 `Session ended`) and its live log streams (`exit`, then closed).',
  responses: {
    200: ok(z.object({ ok: z.literal(true) })),
    403: errorResponse('A session cookie sent from a foreign `Origin`'),
  },
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  if (getCookie(c, SESSION_COOKIE)) assertTrustedOrigin(c)
  await endSession(c)
  return c.json({ ok: true as const }, 200)
}
