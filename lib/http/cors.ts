import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../context'

const ALLOW_METHODS = 'GET,HEAD,PUT,POST,PATCH,DELETE,OPTIONS'
// The gateway's and payment sessions' headers too: the dashboard calls plugins, pays, and reads receipts and balances.
const ALLOW_HEADERS = 'Content-Type,Authorization,x-csrf-token,x-xsrf-token,X-Plugin-Id,X-Payment-Method,X-Session-Id,X-Wallet-Address,X-Session-Voucher'
const EXPOSE_HEADERS =
  'RateLimit-Limit,RateLimit-Remaining,RateLimit-Reset,Retry-After,X-Request-Id,x-plugin-id,Payment-Receipt,X-Session-Remaining,WWW-Authenticate'

/**
 * CORS for the dashboard origins in `APP_ORIGIN`, with credentials. Headers go through `c.header()`
 * before the handler runs: hono's own `cors` writes to `c.res.headers`, which takes @hono/node-server
 * off its fast path and halved throughput here (bench/). Unlisted origins get no CORS headers at all.
 */
export const dashboardCors = createMiddleware<AppEnv>(async (c, next) => {
  const origin = c.req.header('origin')
  const allowed = origin !== undefined && c.var.services.config.APP_ORIGIN.includes(origin)
  c.header('Vary', 'Origin')
  if (allowed) {
    c.header('Access-Control-Allow-Origin', origin)
    c.header('Access-Control-Allow-Credentials', 'true')
  }
  if (c.req.method === 'OPTIONS' && c.req.header('access-control-request-method')) {
    if (allowed) {
      c.header('Access-Control-Allow-Methods', ALLOW_METHODS)
      c.header('Access-Control-Allow-Headers', ALLOW_HEADERS)
      c.header('Access-Control-Max-Age', '600')
    }
    return c.body(null, 204)
  }
  if (allowed) c.header('Access-Control-Expose-Headers', EXPOSE_HEADERS)
  await next()
})
