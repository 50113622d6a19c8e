import type { RouteHandler } from '@hono/zod-openapi'
import type { AppEnv } from '../../../lib/context'
import { ApiError, peerUnavailable } from '../../../lib/http/errors'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { queueReceiverRoute } from '../../../lib/http/routes'
import { jsonBody } from '../../../lib/http/validation'
import { log } from '../../../lib/log'
import { expireSessions, RADIO_EXPIRE_PATH, RADIO_SWEEP_CRON } from '../expire'
import { MuxError, muxClient } from '../mux'
import { MAX_SESSION_SEC } from '../sessions'
import { ExpireMessage, ExpireResultSchema } from '../schemas'

export const route = queueReceiverRoute({
  path: RADIO_EXPIRE_PATH,
  operationId: 'expireRadioSessions',
  tags: ['Radio'],
  summary: 'Queue receiver: end DJ sessions at their 2-hour maximum',
  description:
    'Signed queue deliveries only (`Upstash-Signature`). `{sessionId}` is published when a session starts, delayed ' +
    `${MAX_SESSION_SEC} s: if the session is still current it becomes \`auto-ended\` and its Mux live stream is disabled ` +
    '(recordings kept); a session ended meanwhile is left as it is. When Mux fails the answer is 502 and the queue ' +
    `retries. \`{}\` (the cron, \`${RADIO_SWEEP_CRON}\`) sweeps: every current session past its expiry, 50 per delivery, ` +
    'for expiries a lost delivery missed; Mux failures there are counted and left for the next sweep. Without Mux ' +
    'configured (`MUX_TOKEN_ID`, `MUX_TOKEN_SECRET`) no session can exist: a sweep answers 200 with nothing ended and ' +
    'logs nothing (the local server does not even schedule it), while a named session is 503 `NOT_CONFIGURED`.',
  request: { body: jsonBody(ExpireMessage) },
  responses: {
    200: ok(ExpireResultSchema),
    503: errorResponse('Mux failed on the named session: `Streaming provider unavailable` (`STREAMING_UNAVAILABLE`, with `Retry-After`), retried; or `Streaming not configured` (`NOT_CONFIGURED`)'),
  },
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { sessionId } = c.req.valid('json')
  const { config } = c.var.services
  // A sweep with streaming unconfigured: no session can have been created, nothing to do and nothing to report.
  if (!sessionId && !(config.MUX_TOKEN_ID && config.MUX_TOKEN_SECRET)) return c.json({ ok: true as const, ended: 0, failed: 0 }, 200)
  try {
    const done = await expireSessions(c.var.services.db, muxClient(config), sessionId, c.var.requestId)
    return c.json({ ok: true as const, ...done }, 200)
  } catch (e) {
    if (!(e instanceof MuxError)) throw e
    log.error('radio.expire_failed', { dependency: 'mux', requestId: c.var.requestId, sessionId, status: e.status, reason: e.message })
    throw peerUnavailable('STREAMING_UNAVAILABLE')
  }
}
