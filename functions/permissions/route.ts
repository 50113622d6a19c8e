import { limits } from '../../lib/http/limits'
import { limitedRoute } from '../../lib/http/rate-limit'
import { type SignedInConfig, signedInRoute } from '../../lib/http/routes'

/**
 * A session route of the permissions family: the caller's session (401 without), then the permissions limit
 * (every `/api/permissions*` route together, per user), then the route's own validation and handler.
 */
export const permissionsRoute = <const R extends SignedInConfig>(config: R) => signedInRoute(limitedRoute(limits.permissions, config))
