import { limits } from '../../lib/http/limits'
import { limitedRoute } from '../../lib/http/rate-limit'
import { type SignedInConfig, signedInRoute } from '../../lib/http/routes'

/**
 * A session route of the agents family: the caller's session (401 without), then the spec's `/api/agents` limit
 * (100 per minute per IP, every agent route together) and as much per user, then the route's own validation and handler.
 */
export const agentRoute = <const R extends SignedInConfig>(config: R) =>
  signedInRoute(limitedRoute(limits.agents, limitedRoute(limits.agentsPerUser, config)))
