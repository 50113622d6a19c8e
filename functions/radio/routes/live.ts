import { createRoute } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import type { AppEnv } from '../../../lib/context'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { LIVE_CACHE_MS, liveView } from '../live'
import { LiveViewSchema } from '../schemas'

export const route = createRoute(
  limitedRoute(limits.radioLive, {
    method: 'get',
    path: '/api/radio/live',
    operationId: 'getRadioLive',
    security: [],
    tags: ['Radio'],
    summary: 'Who is on air',
    description:
      "No authentication. The DJs on air are Mux's active live streams, each enriched from its session record (name, " +
      'wallet, start; a stream without one is `Anonymous DJ` with a null wallet and Mux\'s creation time as Unix ' +
      'seconds). `streamKey` is always null: a stream key is a credential, shown once at creation. `primaryDj` is ' +
      'the longest-running DJ. `availability` is `live` with a DJ on air, else `idle`. When Mux cannot be reached ' +
      '(not configured, an error, or no answer within `MUX_TIMEOUT_MS`) the answer is still 200, built from the ' +
      'session records the webhooks marked `live` (unexpired), with `availability: degraded`, `source: ' +
      "session-cache` and an `error` string. 503 only when the database fails too. The answer is cached for " +
      `${LIVE_CACHE_MS / 1000} s (Mux limits API reads).`,
    responses: {
      200: ok(LiveViewSchema),
      503: errorResponse('Neither Mux nor the session records could be read: `Radio status unavailable` (`STREAMING_UNAVAILABLE`, with `Retry-After`)'),
    },
  }),
)

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => c.json(await liveView(c.var.services, c.var.requestId), 200)
