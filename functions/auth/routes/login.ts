import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { eq } from 'drizzle-orm'
import { requireCsrf } from '../../../lib/auth/csrf'
import { verifySecretOrDecoy } from '../../../lib/auth/password'
import { startSession } from '../../../lib/auth/session'
import type { AppEnv } from '../../../lib/context'
import { ApiError } from '../../../lib/http/errors'
import { unavailableDependency } from '../../../lib/http/dependency'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { jsonBody } from '../../../lib/http/validation'
import { users } from '../../../schema'
import { errorFields, log } from '../../../lib/log'

const required = 'Email and password are required'
const LoginBody = z
  .object({
    email: z.string({ error: required }).trim().min(1, required).max(254, 'Invalid credentials'),
    password: z.string({ error: required }).min(1, required).max(256, 'Invalid credentials'),
  })
  .openapi('LoginRequest')

export const route = createRoute(limitedRoute(limits.login, {
  method: 'post',
  path: '/api/auth/login',
  operationId: 'signIn',
  security: [],
  tags: ['Auth'],
  summary: 'Sign in with email and password',
  description:
    'Requires the CSRF header (`x-csrf-token` or `x-xsrf-token`, `{token}:{signed}` from `GET /api/auth/csrf`). ' +
    'Email is case-insensitive. Sets `service-session` (HttpOnly, SameSite=Lax, Path=/, 30 days; Secure over ' +
    'HTTPS), a new session at every sign-in. 5 attempts per 15 minutes per IP, shared across instances.',
  middleware: [requireCsrf],
  request: { body: jsonBody(LoginBody) },
  responses: {
    200: ok(z.object({ ok: z.literal(true), user: z.object({ id: z.string().max(255), name: z.string().max(256) }) }).openapi('LoginResponse')),
    400: errorResponse('Missing email or password'),
    401: errorResponse('Invalid credentials'),
    403: errorResponse('Invalid or missing CSRF token'),
    500: errorResponse('Login failed'),
  },
}))

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { email, password } = c.req.valid('json')
  try {
    const { reader, config } = c.var.services
    const [user] = await reader.asService('signIn', (db) =>
      db.select({ id: users.id, name: users.name, passwordHash: users.passwordHash }).from(users).where(eq(users.email, email.toLowerCase())),
    )
    // Same work whether or not the account exists: the answer never says which part was wrong.
    const valid = await verifySecretOrDecoy(password, user?.passwordHash, config.PASSWORD_HASH_COST)
    if (!user || !valid) throw new ApiError('INVALID_CREDENTIALS')
    await startSession(c, user.id)
    return c.json({ ok: true as const, user: { id: user.id, name: user.name } }, 200)
  } catch (e) {
    if (e instanceof ApiError || unavailableDependency(e)) throw e
    log.error('auth.login_failed', { requestId: c.var.requestId, ...errorFields(e) })
    throw new ApiError('INTERNAL', 'Login failed')
  }
}
