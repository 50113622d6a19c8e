import { createMiddleware } from 'hono/factory'
import { SESSION_COOKIE } from '../auth/session'
import type { AppEnv } from '../context'

// Every way a caller proves who they are: the session cookie, a Bearer key (user key or shared key),
// the web tier's identity headers.
const SESSION_COOKIE_RE = new RegExp(`(?:^|;\\s*)${SESSION_COOKIE}=`)

/**
 * `Cache-Control: no-store` on every response to a request that carries credentials, set once here
 * rather than per route: such a response is the caller's own data (profile, keys, devices, trial), which
 * no browser or shared cache may keep. Set before the handler through `c.header()` (the fast path, as in
 * cors.ts); a route that sets its own Cache-Control still wins.
 */
export const noStoreWhenCredentialed = createMiddleware<AppEnv>(async (c, next) => {
  const cookie = c.req.header('cookie')
  if (
    (cookie !== undefined && SESSION_COOKIE_RE.test(cookie)) ||
    c.req.header('authorization') !== undefined ||
    c.req.header('x-user-signature') !== undefined ||
    c.req.header('x-user-id') !== undefined ||
    c.req.header('x-user-email') !== undefined
  ) {
    c.header('Cache-Control', 'no-store')
  }
  await next()
})
