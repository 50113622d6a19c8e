import { OpenAPIHono } from '@hono/zod-openapi'
import { bodyLimit } from 'hono/body-limit'
import { cors } from 'hono/cors'
import { requestId } from 'hono/request-id'
import { type AppEnv, type ServiceProvider, servicesMiddleware } from './context'
import { ApiError, notFound, onError } from './http/errors'
import { validationHook } from './http/validation'
import { managedServices } from './services/managed'

export const MAX_BODY_BYTES = 1024 * 1024

/** A family's routes: mounted by its own Worker entry and by the local server alike. */
export const createRouter = () => new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
export type Router = ReturnType<typeof createRouter>

/**
 * The stack every function shares, in order: request id, per-request services, CORS for the dashboard
 * origins (with credentials), the 1 MB body limit, and one error shape.
 */
export function createPlatformApp(provide: ServiceProvider) {
  const app = createRouter()
  app.use('*', requestId())
  app.use('*', servicesMiddleware(provide))
  app.use('*', (c, next) =>
    cors({
      origin: (origin) => (c.var.services.config.APP_ORIGIN.includes(origin) ? origin : null),
      credentials: true,
      allowHeaders: ['Content-Type', 'Authorization', 'x-csrf-token', 'x-xsrf-token'],
      exposeHeaders: ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After', 'X-Request-Id'],
    })(c, next),
  )
  app.use(
    '*',
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: () => {
        throw new ApiError(413, 'Payload too large')
      },
    }),
  )
  app.onError(onError)
  app.notFound(notFound)
  return app
}

/** A family deployed as its own Worker: the shared stack with managed stores, then its routes. */
export function createWorker(...routers: Router[]) {
  const app = createPlatformApp(managedServices)
  for (const r of routers) app.route('/', r)
  return app
}
