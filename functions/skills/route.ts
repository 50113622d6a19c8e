import type { NamedLimit } from '../../lib/http/limits'
import { limitedRoute } from '../../lib/http/rate-limit'
import { type SignedInConfig, signedInRoute } from '../../lib/http/routes'

/** A session route of the skills family: the session (401 without), then the route's per-user limit. */
export const skillRoute = <const R extends SignedInConfig>(rule: NamedLimit, config: R) => signedInRoute(limitedRoute(rule, config))
