import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import type { AppEnv } from '../../../lib/context'
import { ok } from '../../../lib/http/openapi'
import { queueReceiverRoute } from '../../../lib/http/routes'
import { jsonBody } from '../../../lib/http/validation'
import { processSecurityEvent, RISC_QUEUE_PATH } from '../risc-events'
import { afterSessionsEnded } from '../../../lib/auth/session-bound'

export const route = queueReceiverRoute({
  path: RISC_QUEUE_PATH,
  operationId: 'processRiscEvent',
  tags: ['Security'],
  summary: 'Queue receiver: act on a stored RISC event',
  description:
    'Signed queue deliveries only (`Upstash-Signature`). Acts on the event once: sessions-revoked deletes the ' +
    "user's sessions (their permission sockets and log streams close); account-disabled sets `signInDisabled` (and " +
    'deletes sessions when the reason is hijacking); ' +
    'account-enabled clears it; tokens-revoked drops the stored tokens; verification does nothing. Records ' +
    '`processedAt` and `outcome`.',
  request: { body: jsonBody(z.object({ jti: z.string().min(1).max(256) })) },
  responses: {
    200: ok(z.object({ processed: z.boolean(), outcome: z.string().max(1024).optional() }), 'Processed, or already processed'),
  },
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { db, config } = c.var.services
  const { users: affected, ended, ...result } = await processSecurityEvent(db, c.req.valid('json').jti, config.GOOGLE_ISSUER)
  // Deleted sessions and disabled sign-ins hold from the affected users' next request, cached or not; what the
  // deleted sessions opened (permission sockets, log streams) closes now.
  await afterSessionsEnded(c, ended, affected)
  return c.json(result, 200)
}
