import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../../../lib/context'
import { ApiError } from '../../../lib/http/errors'
import { unavailableDependency } from '../../../lib/http/dependency'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { errorFields, log } from '../../../lib/log'
import { HANDLED_EVENTS, type MuxEvent, processMuxEvent } from '../webhook'
import { MUX_WEBHOOK_TOLERANCE_SEC, verifyMuxSignature } from '../webhook-signature'
import { MuxEventSchema, WebhookAckSchema } from '../schemas'

type WebhookEnv = AppEnv & { Variables: { muxEvent: MuxEvent } }

const INVALID = () => new ApiError('WEBHOOK_SIGNATURE_INVALID')

/**
 * The raw body against `mux-signature` before anything else reads it: 503 without the endpoint secret, 400 for a
 * missing, forged or stale signature, 400 for a signed body that is not an event; the event for the handler.
 */
const verifyMuxWebhook = createMiddleware<WebhookEnv>(async (c, next) => {
  const secret = c.var.services.config.MUX_WEBHOOK_SECRET
  if (!secret) throw new ApiError('NOT_CONFIGURED', 'Mux webhook not configured')
  const signature = c.req.header('mux-signature')
  if (!signature || signature.length > 4096) throw INVALID()
  const raw = await c.req.text()
  if (!(await verifyMuxSignature(secret, signature, raw))) {
    log.warn('radio.webhook_refused', { requestId: c.var.requestId })
    throw INVALID()
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    throw new ApiError('INVALID_JSON')
  }
  const event = MuxEventSchema.safeParse(parsed)
  if (!event.success) throw new ApiError('VALIDATION', 'Invalid event')
  c.set('muxEvent', event.data as MuxEvent)
  await next()
})

export const route = createRoute({
  method: 'post',
  path: '/api/radio/webhook',
  operationId: 'receiveMuxWebhook',
  security: [],
  tags: ['Radio'],
  summary: 'Receive a Mux webhook event',
  description:
    'Called by Mux. The raw body must carry a valid `mux-signature` (`t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">` ' +
    `with \`MUX_WEBHOOK_SECRET\`, compared in constant time, \`t\` within ${MUX_WEBHOOK_TOLERANCE_SEC} s of our clock); ` +
    'otherwise 400 and nothing is written. Each event id is applied once: it is recorded in the same transaction as ' +
    'its effect, so a redelivery (even concurrent) is 200 `duplicate`, and a failure midway answers 500 with nothing ' +
    `recorded, for Mux to retry. Handled: ${HANDLED_EVENTS.map((t) => `\`${t}\``).join(', ')}, on the session streaming to ` +
    'that live stream (`data.id`): `active` → `live` (the broadcast is playable; unexpired sessions only); `idle` → ' +
    'back to `active` (the DJ stopped broadcasting after the reconnect window: the session keeps its slot until ended ' +
    'or expired); `disabled` or `deleted` while current → `auto-ended` (when this service ended the session, it is ' +
    'already final and nothing changes). `video.live_stream.disconnected` and every other type: 200 `ignored`.',
  middleware: [verifyMuxWebhook] as const,
  request: {
    headers: z.object({ 'mux-signature': z.string().max(4096).optional().openapi({ description: '`t=<unix>,v1=<hex HMAC>`' }) }),
    body: { required: true, content: { 'application/json': { schema: MuxEventSchema } } },
  },
  responses: {
    200: ok(WebhookAckSchema, 'Applied, or recorded with no effect'),
    400: errorResponse('Missing, forged or stale signature (`WEBHOOK_SIGNATURE_INVALID`); or a signed body that is not an event (`INVALID_JSON`, `VALIDATION`)'),
    500: errorResponse('Processing failed (`INTERNAL`): nothing was recorded; Mux retries'),
    503: errorResponse('`Mux webhook not configured` (`NOT_CONFIGURED`)'),
  },
})

export const handler: RouteHandler<typeof route, WebhookEnv> = async (c) => {
  const event = c.var.muxEvent
  let outcome
  try {
    outcome = await processMuxEvent(c.var.services.db, event)
  } catch (e) {
    log.error('radio.webhook_failed', { requestId: c.var.requestId, eventId: event.id, eventType: event.type, ...errorFields(e) })
    if (unavailableDependency(e)) throw e // 503 with Retry-After: Mux sends it again
    throw new ApiError('INTERNAL', 'Webhook processing failed')
  }
  log.info('radio.webhook', { requestId: c.var.requestId, eventId: event.id, eventType: event.type, outcome })
  return c.json({ received: true as const, outcome }, 200)
}
