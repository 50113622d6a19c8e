import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { readSession } from '../../../lib/auth/session'
import type { AppEnv } from '../../../lib/context'
import { noStore } from '../../../lib/http/no-store'
import { ok } from '../../../lib/http/openapi'

const SessionSchema = z
  .object({
    user: z.object({ id: z.string().max(255), email: z.string().max(254), name: z.string().max(256), isAdmin: z.boolean() }).nullable(),
    expires: z.string().max(64).nullable().openapi({ description: 'ISO 8601; null without a session' }),
  })
  .openapi('Session')

export const route = createRoute({
  method: 'get',
  path: '/api/auth/session',
  operationId: 'getSession',
  security: [],
  middleware: [noStore] as const, // the answer is whether a session came
  tags: ['Auth'],
  summary: 'The current session',
  description: 'Always 200; `user` is null when there is no session or it expired.',
  responses: { 200: ok(SessionSchema) },
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const session = await readSession(c)
  if (!session) return c.json({ user: null, expires: null }, 200)
  const { id, email, name, isAdmin, expiresAt } = session
  return c.json({ user: { id, email, name, isAdmin }, expires: expiresAt.toISOString() }, 200)
}
