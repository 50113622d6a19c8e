import { OpenAPIHono } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { type AppEnv, type ServiceProvider, servicesMiddleware } from './context'
import { dashboardCors } from './http/cors'
import { noStoreWhenCredentialed } from './http/no-store'
import { ApiError, notFound, onError } from './http/errors'
import { methodNotAllowedOr } from './http/methods'
import { requestLog } from './http/request-log'
import { refuseHostileUrl, validationHook } from './http/validation'
import { type ManagedStores, managedServices } from './services/managed'

export const MAX_BODY_BYTES = 1024 * 1024

const limitBody = bodyLimit({
  maxSize: MAX_BODY_BYTES,
  onError: () => {
    throw new ApiError('PAYLOAD_TOO_LARGE')
  },
})
// Touching a GET's body makes @hono/node-server build a full Request: half the throughput (bench/).
const BODYLESS = new Set(['GET', 'HEAD', 'OPTIONS'])
/**
 * Routes that read their body as a stream under their own cap instead of the shared 1 MB: uploads to
 * `POST /api/files`, capped by the caller's storage quota (functions/files/upload.ts). Matched as the router matches
 * (`strict: false`: a trailing slash names the same route).
 */
const OWN_BODY_LIMIT = new Set(['POST /api/files'])
const skipsSharedBodyLimit = (c: Context) => BODYLESS.has(c.req.method) || OWN_BODY_LIMIT.has(`${c.req.method} ${c.req.path.replace(/\/+$/, '')}`)

/** A family's routes: mounted by its own Worker entry and by the local server alike. */
// strict: false: `/api/keys/` is `/api/keys` (one route, no redirect), as the OpenAPI description says.
export const createRouter = () => new OpenAPIHono<AppEnv>({ defaultHook: validationHook, strict: false })
export type Router = ReturnType<typeof createRouter>

/**
 * The stack every function shares, in order: request id and the request's log line, per-request services, CORS for the dashboard
 * origins (with credentials), no NUL in the URL, `no-store` for credentialed requests, the 1 MB body limit (but
 * for the routes with their own, `OWN_BODY_LIMIT`),
 * and one error shape.
 */
export function createPlatformApp(provide: ServiceProvider) {
  const app = createRouter()
  app.use('*', requestLog)
  app.use('*', servicesMiddleware(provide))
  app.use('*', dashboardCors)
  app.use('*', refuseHostileUrl)
  app.use('*', noStoreWhenCredentialed)
  app.use('*', (c, next) => (skipsSharedBodyLimit(c) ? next() : limitBody(c, next)))
  app.onError(onError)
  app.notFound(methodNotAllowedOr(notFound, () => app.routes))
  return app
}

/** A family deployed as its own Worker: the shared stack with the managed stores it uses, then its routes. */
export function createWorker(routes: Router, stores: ManagedStores = {}) {
  return createPlatformApp(managedServices(stores)).route('/', routes)
}
