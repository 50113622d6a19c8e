import { createRoute, type RouteConfig } from '@hono/zod-openapi'
import { requireAdminSession, requireSession, UNSAFE_METHODS } from '../auth/session'
import { errorResponse, type Middleware, type MiddlewareList } from './openapi'

/** A route's declaration without what `signedInRoute` adds. */
export type SignedInConfig = Omit<RouteConfig, 'security' | 'middleware'> & { middleware?: readonly Middleware[] }

/**
 * `createRoute` for a route that needs a session (an admin's with `access: 'admin'`): `requireSession` runs
 * before the route's own middleware, the operation is documented with the `session` scheme and its 401 (and 403
 * for a foreign `Origin` on unsafe methods, `ADMIN_REQUIRED` for admin routes), and the handler's `c.var.user`
 * is typed as present.
 */
export function signedInRoute<const R extends SignedInConfig>(config: R, access: 'user' | 'admin' = 'user') {
  const gate = access === 'admin' ? requireAdminSession : requireSession
  const forbidden = [
    ...(UNSAFE_METHODS.has(config.method.toUpperCase()) ? ['Sent from a foreign `Origin` (`ORIGIN_NOT_ALLOWED`)'] : []),
    ...(access === 'admin' ? ['Not an admin (`ADMIN_REQUIRED`)'] : []),
  ]
  const defaults = {
    401: errorResponse('No session (`UNAUTHORIZED`)'),
    ...(forbidden.length ? { 403: errorResponse(forbidden.join('; or ')) } : {}),
  }
  return createRoute({
    ...config,
    middleware: [gate, ...(config.middleware ?? [])],
    security: [{ session: [] }],
    responses: { ...defaults, ...config.responses },
  }) as unknown as Omit<R, 'middleware' | 'responses'> & {
    // The 401 is typed too, so a typed client sees it (the 403 depends on the method: left to the document).
    responses: R['responses'] & { 401: ReturnType<typeof errorResponse> }
    middleware: [typeof requireSession, ...MiddlewareList<R['middleware']>]
    security: { session: string[] }[]
    getRoutingPath(): string
  }
}
