import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import type { AppEnv } from '../../../lib/context'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { jsonBody } from '../../../lib/http/validation'
import { requireQueueSignature } from '../../../lib/queue/receiver'
import { processSecurityEvent, RISC_QUEUE_PATH } from '../risc-events'
import { expireCachedSessions } from '../../../lib/auth/session-cache'

export const route = createRoute({
  method: 'post',
  path: RISC_QUEUE_PATH,
  operationId: 'processRiscEvent',
  security: [{ queueSignature: [] }],
  tags: ['Security'],
  summary: 'Queue receiver: act on a stored RISC event',
  description:
    'Signed queue deliveries only (`Upstash-Signature`). Acts on the event once: sessions-revoked deletes the ' +
    "user's sessions; account-disabled sets `signInDisabled` (and deletes sessions when the reason is hijacking); " +
    'account-enabled clears it; tokens-revoked drops the stored tokens; verification does nothing. Records ' +
    '`processedAt` and `outcome`.',
  middleware: [requireQueueSignature] as const,
  request: { body: jsonBody(z.object({ jti: z.string().min(1).max(256) })) },
  responses: {
    200: ok(z.object({ processed: z.boolean(), outcome: z.string().max(1024).optional() }), 'Processed, or already processed'),
    401: errorResponse('Missing or invalid queue signature'),
  },
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { db, config } = c.var.services
  const { users: affected, ...result } = await processSecurityEvent(db, c.req.valid('json').jti, config.GOOGLE_ISSUER)
  // Deleted sessions and disabled sign-ins hold from the affected users' next request, cached or not.
  await expireCachedSessions(c.var.services, ...affected)
  return c.json(result, 200)
}
