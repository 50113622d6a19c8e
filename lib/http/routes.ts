import { createRoute, type RouteConfig } from '@hono/zod-openapi'
import { requireAdminSession, requireSession, UNSAFE_METHODS } from '../auth/session'
import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../context'
import { ApiError } from './errors'
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

/**
 * Guards a queue or cron receiver: the body must carry a valid `Upstash-Signature` for this URL (QStash in
 * production, the in-process queue locally: both sign the same way). 401 otherwise.
 */
export const requireQueueSignature = createMiddleware<AppEnv>(async (c, next) => {
  const signature = c.req.header('upstash-signature')
  if (!signature) throw new ApiError('SIGNATURE_REQUIRED', 'Missing queue signature')
  const body = await c.req.text()
  const url = c.var.services.config.PUBLIC_URL ? `${c.var.services.config.PUBLIC_URL}${new URL(c.req.url).pathname}` : c.req.url
  if (!(await c.var.services.queueVerifier.verify(signature, body, url))) throw new ApiError('INVALID_SIGNATURE', 'Invalid queue signature')
  await next()
})

/** A queue or cron receiver's declaration without what `queueReceiverRoute` adds (it is always a POST). */
export type QueueReceiverConfig = Omit<RouteConfig, 'method' | 'security' | 'middleware'> & { middleware?: readonly Middleware[] }

/**
 * `createRoute` for a signed queue or cron receiver (QStash in production, the in-process queue locally): a POST
 * whose body must carry a valid `Upstash-Signature` for its URL (`requireQueueSignature`, before the route's own
 * middleware), documented with the `queueSignature` scheme and its 401.
 */
export function queueReceiverRoute<const R extends QueueReceiverConfig>(config: R) {
  return createRoute({
    ...config,
    method: 'post',
    middleware: [requireQueueSignature, ...(config.middleware ?? [])],
    security: [{ queueSignature: [] }],
    responses: { 401: errorResponse('Missing or invalid queue signature (`SIGNATURE_REQUIRED`, `INVALID_SIGNATURE`)'), ...config.responses },
  }) as unknown as Omit<R, 'middleware' | 'responses'> & {
    method: 'post'
    responses: R['responses'] & { 401: ReturnType<typeof errorResponse> }
    middleware: [typeof requireQueueSignature, ...MiddlewareList<R['middleware']>]
    security: { queueSignature: string[] }[]
    getRoutingPath(): string
  }
}
