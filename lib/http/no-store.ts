import { createMiddleware } from 'hono/factory'
import { SESSION_COOKIE } from '../auth/session'
import type { AppEnv } from '../context'

// Every way a caller proves who they are: the session cookie, a Bearer key (user key or shared key),
// the web tier's identity headers. The cookie is found as the session reader finds it (blanks around its name too).
const SESSION_COOKIE_RE = new RegExp(`(?:^|;)[ \\t]*${SESSION_COOKIE}[ \\t]*=`)

/**
 * `Cache-Control: no-store` for a route whose answer no cache may keep even when the request carries no
 * credentials: a single-use nonce or challenge, a CSRF token, an OAuth state or its redirects, a capability's
 * answer, or an answer that depends on whether the caller is signed in (a cache keys on the URL, not the cookie).
 * Declared in the route's `middleware`; set before the handler, so a route's own Cache-Control still wins.
 */
export const noStore = createMiddleware<AppEnv>(async (c, next) => {
  c.header('Cache-Control', 'no-store')
  await next()
})

/**
 * `noStore` for every request that carries credentials, set once here rather than per route: such a response is
 * the caller's own data (profile, keys, devices, trial), which no browser or shared cache may keep. Set before
 * the handler through `c.header()` (the fast path, as in cors.ts).
 */
export const noStoreWhenCredentialed = createMiddleware<AppEnv>(async (c, next) => {
  const cookie = c.req.header('cookie')
  const credentialed =
    (cookie !== undefined && SESSION_COOKIE_RE.test(cookie)) ||
    c.req.header('authorization') !== undefined ||
    c.req.header('x-user-signature') !== undefined ||
    c.req.header('x-user-id') !== undefined ||
    c.req.header('x-user-email') !== undefined
  return credentialed ? noStore(c, next) : next()
})
