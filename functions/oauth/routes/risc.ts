import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { eq } from 'drizzle-orm'
import { errors } from 'jose'
import type { AppEnv } from '../../../lib/context'
import { asService } from '../../../lib/db/rls'
import { ApiError, peerUnavailable } from '../../../lib/http/errors'
import { errorResponse } from '../../../lib/http/openapi'
import { issuerVariants, OidcUnavailableError, verifyProviderJwt } from '../oidc'
import { securityEvents } from '../../../schema'
import { googleDiscovery, riscAudiences } from '../google'
import { RISC_QUEUE_PATH, subjectOf } from '../risc-events'
import { errorFields, log } from '../../../lib/log'

const INVALID = 'Invalid security event token'
// A SET is a couple of kilobytes; the bound keeps an oversized body from reaching the JWT parser.
const Jwt = z.string().max(16_384).openapi({ description: 'The security event token (compact JWS)' })

export const route = createRoute({
  method: 'post',
  path: '/api/security/risc',
  operationId: 'receiveRiscEvent',
  security: [],
  tags: ['Security'],
  summary: 'Receive a Google Cross-Account Protection (RISC) event',
  description:
    'The body is the raw security event token. Accepted only when signed RS256 by a key in the JWKS named by ' +
    "Google's discovery document (`jwks_uri`, the same set its RISC configuration names), matched by `kid`, " +
    'cached 24 h (an unknown `kid` refetches at most once per 5 minutes); issuer = GOOGLE_ISSUER; audience = ' +
    'GOOGLE_CLIENT_ID or one of GOOGLE_CLIENT_IDS. 202 with an empty body, then processed through the queue; a ' +
    'repeated `jti` is acknowledged and not acted on again. When the job queue does not take it (down, or no answer ' +
    'within `QSTASH_TIMEOUT_MS`) the event is not acknowledged: 502 `QUEUE_UNAVAILABLE` with `Retry-After` and nothing ' +
    'kept (its `jti` stays free), so Google sends it again and that delivery is acted on.',
  request: {
    body: { required: true, content: { 'application/secevent+jwt': { schema: Jwt }, 'text/plain': { schema: Jwt } } },
  },
  responses: {
    202: { description: 'Accepted (empty body)' },
    400: errorResponse('Invalid security event token'),
    502: errorResponse('`Queue unavailable` (`QUEUE_UNAVAILABLE`, `Retry-After`): not acknowledged, nothing kept; Google retries'),
    503: errorResponse("Google's keys could not be fetched (`PROVIDER_UNAVAILABLE`): retry later"),
  },
})

const SecurityEventToken = z.object({
  iss: z.string(),
  jti: z.string().min(1).max(256),
  events: z.record(z.string(), z.record(z.string(), z.unknown())).refine((e) => Object.keys(e).length > 0),
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { services } = c.var // stores are opened on first use: an unconfigured deployment still answers 400
  const { config } = services
  const audience = riscAudiences(config)
  const token = (await c.req.text()).trim()
  if (!audience.length || !token) throw new ApiError('INVALID_SECURITY_EVENT', INVALID)
  const kv = services.kv // outside the try: a missing store is its own 503, not an invalid token
  let claims
  try {
    claims = await verifyProviderJwt(token, {
      kv,
      jwksUri: async () => (await googleDiscovery(c)).jwks_uri,
      issuer: issuerVariants(config.GOOGLE_ISSUER),
      audience,
    })
  } catch (e) {
    if (e instanceof errors.JOSEError) throw new ApiError('INVALID_SECURITY_EVENT', INVALID)
    if (!(e instanceof OidcUnavailableError)) throw e // a store failure is ours, not the token's
    log.error('oauth.risc_provider_unavailable', { dependency: 'google', requestId: c.var.requestId, ...errorFields(e) })
    throw peerUnavailable('PROVIDER_UNAVAILABLE', 'Identity provider unavailable')
  }
  const set = SecurityEventToken.safeParse(claims)
  if (!set.success) throw new ApiError('INVALID_SECURITY_EVENT', INVALID)

  const { jti, iss, events } = set.data
  const { db, queue } = services
  const [stored] = await asService(db, 'riscEvents', (tx) =>
    tx
      .insert(securityEvents)
      .values({ jti, issuer: iss, eventTypes: Object.keys(events), ...subjectOf(events), payload: claims })
      .onConflictDoNothing({ target: securityEvents.jti })
      .returning({ jti: securityEvents.jti }),
  )
  if (stored) {
    try {
      await queue.publish(RISC_QUEUE_PATH, { jti })
    } catch (e) {
      // Unqueued, the row would make Google's retry look like a duplicate: drop it and let the retry come.
      await asService(db, 'riscEvents', (tx) => tx.delete(securityEvents).where(eq(securityEvents.jti, jti)))
      throw e
    }
  }
  return c.body(null, 202)
}
