import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { getAddress } from 'viem'
import { createMiddleware } from 'hono/factory'
import { requireSessionSecret } from '../../../lib/auth/csrf'
import type { AppEnv } from '../../../lib/context'
import { ApiError, peerUnavailable } from '../../../lib/http/errors'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { log } from '../../../lib/log'
import { endSession } from '../end'
import { MuxError, muxClient } from '../mux'
import { type DjToken, readDjToken } from '../token'
import { blankJsonBodyIsEmptyObject } from '../../../lib/http/optional-body'
import { EndedStreamSchema, EndStreamBody } from '../schemas'

type DjEnv = AppEnv & { Variables: { djToken: DjToken } }

/** `Authorization: Bearer <accessToken>` from the create answer, checked before the body is read: 401 otherwise. */
const requireDjToken = createMiddleware<DjEnv>(async (c, next) => {
  const secret = requireSessionSecret(c.var.services.config.sessionSecret)
  const header = c.req.header('authorization') ?? ''
  const m = /^Bearer\s+(\S{1,1024})$/i.exec(header.trim())
  if (!m) throw new ApiError('UNAUTHORIZED', 'DJ access token required')
  const token = await readDjToken(secret, m[1])
  if (!token) throw new ApiError('INVALID_TOKEN', 'Invalid DJ access token')
  c.set('djToken', token)
  await next()
})

export const route = createRoute(
  limitedRoute(limits.radioEnd, {
    method: 'delete',
    path: '/api/radio/streams/{id}',
    operationId: 'endRadioStream',
    security: [{ djAccessToken: [] }],
    tags: ['Radio'],
    summary: 'End a DJ session',
    description:
      "The session's own DJ access token (`Authorization: Bearer <accessToken>`, from the create answer) ends it, " +
      'whether `active` or `live`. `archive: true` → `archived`: the Mux live stream is disabled and its recordings ' +
      'kept. Otherwise → `ended`: the stream is disabled, its recordings deleted, then the stream itself. The body is ' +
      'optional (none or `{}` ends without archiving). Mux is called first: when it fails the answer is 502 and the ' +
      'session stays as it was (a retry finishes the job). Idempotent: ending again the same way answers 200 with ' +
      '`alreadyEnded: true`; a session that already ended another way (the other choice, or `auto-ended`) is 409 ' +
      '`SESSION_ENDED` with its `status`. A token names one session: another stream\'s `:id` is 403.',
    middleware: [requireDjToken, blankJsonBodyIsEmptyObject] as const,
    request: {
      params: z.object({ id: z.string().min(1).max(255).openapi({ description: 'The stream id (`stream.id` of the create answer)' }) }),
      body: { required: false, content: { 'application/json': { schema: EndStreamBody } } },
    },
    responses: {
      200: ok(EndedStreamSchema),
      400: errorResponse('`archive must be a boolean`, or not a JSON object (`VALIDATION`)'),
      401: errorResponse('`DJ access token required` (`UNAUTHORIZED`); or forged, malformed or expired: `Invalid DJ access token` (`INVALID_TOKEN`)'),
      403: errorResponse('The token is for another stream: `This token is for another stream` (`FORBIDDEN`)'),
      404: errorResponse('The token\'s session no longer exists: `Stream not found` (`NOT_FOUND`)'),
      409: errorResponse('Ended another way already: `Session already ended` (`SESSION_ENDED`, with `status`)'),
      415: errorResponse('A body that is not JSON'),
      500: errorResponse('`Session secret not configured` (`MISCONFIGURED`)'),
      503: errorResponse('Mux failed or gave no answer within `MUX_TIMEOUT_MS`: `Streaming provider unavailable` (`STREAMING_UNAVAILABLE`, with `Retry-After`), nothing changed; or `Streaming not configured` (`NOT_CONFIGURED`)'),
    },
  }),
)

export const handler: RouteHandler<typeof route, DjEnv> = async (c) => {
  const { id: streamId } = c.req.valid('param')
  const archive = (c.req.valid('json') as { archive?: boolean }).archive === true
  const token = c.var.djToken
  const wanted = archive ? ('archived' as const) : ('ended' as const)
  const mux = muxClient(c.var.services.config)
  let result
  try {
    result = await endSession(c.var.services.db, mux, token.sessionId, wanted, {
      authorize: (session) => {
        if (session.streamId !== streamId || session.wallet !== token.wallet) throw new ApiError('FORBIDDEN', 'This token is for another stream')
      },
    })
  } catch (e) {
    if (!(e instanceof MuxError)) throw e
    log.error('radio.end_failed', { dependency: 'mux', requestId: c.var.requestId, sessionId: token.sessionId, status: e.status, reason: e.message })
    throw peerUnavailable('STREAMING_UNAVAILABLE')
  }
  if (result.outcome === 'not_found') throw new ApiError('NOT_FOUND', 'Stream not found')
  const { session } = result
  if (session.status !== wanted) throw new ApiError('SESSION_ENDED', { extra: { status: session.status } })
  if (result.outcome === 'ended') log.info('radio.session_ended', { requestId: c.var.requestId, sessionId: session.id, status: wanted })
  return c.json(
    {
      success: true as const,
      alreadyEnded: result.outcome !== 'ended',
      session: { id: session.id, wallet: getAddress(session.wallet), status: wanted, endedAt: (session.endedAt ?? new Date()).toISOString() },
      stream: { id: streamId, assetsDeleted: result.outcome === 'ended' ? result.assetsDeleted : 0 },
    },
    200,
  )
}
