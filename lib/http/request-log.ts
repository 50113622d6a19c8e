import type { Context } from 'hono'
import { createMiddleware } from 'hono/factory'
import { matchedRoutes } from 'hono/route'
import type { AppEnv } from '../context'
import { log } from '../log'

export const REQUEST_ID_HEADER = 'X-Request-Id'

/**
 * A caller's own `X-Request-Id`, for correlating with its logs: only letters, digits and `-_.:=`, at most
 * 64 characters, and never the request's id (a caller could otherwise reuse or forge another request's id).
 */
export function clientRequestId(header: string | undefined): string | undefined {
  const kept = header?.replace(/[^\w\-.:=]/g, '').slice(0, 64)
  return kept || undefined
}

/**
 * The route pattern that answered (`/api/keys/:id`), never the raw path with its ids and query. Middleware is
 * registered for every method (`ALL`), so a request no route matched (404, 405) has no pattern.
 */
export function routePattern(c: Context): string | undefined {
  return matchedRoutes(c).findLast((r) => r.method !== 'ALL')?.path
}

/**
 * Outermost: the server's own request id (in `c.var.requestId` and the `X-Request-Id` response header),
 * then one `request` event per request once it is answered, errors included. `LOG_REQUESTS=0` turns the
 * event off (the test harness does, unless a test asks for it).
 */
export const requestLog = createMiddleware<AppEnv>(async (c, next) => {
  const started = performance.now()
  const requestId = crypto.randomUUID()
  const clientId = clientRequestId(c.req.header(REQUEST_ID_HEADER))
  c.set('requestId', requestId)
  c.set('clientRequestId', clientId)
  c.header(REQUEST_ID_HEADER, requestId)
  await next()
  if (c.var.services?.config.LOG_REQUESTS === false) return
  log.info('request', {
    requestId,
    clientRequestId: clientId,
    method: c.req.method,
    route: routePattern(c),
    status: c.res.status,
    durationMs: Math.round(performance.now() - started),
    userId: c.var.user?.id ?? c.var.identity?.userId,
  })
})
