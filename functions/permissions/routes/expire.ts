import type { RouteHandler } from '@hono/zod-openapi'
import type { AppEnv } from '../../../lib/context'
import { ok } from '../../../lib/http/openapi'
import { queueReceiverRoute } from '../../../lib/http/routes'
import { jsonBody } from '../../../lib/http/validation'
import { errorFields, log } from '../../../lib/log'
import { expiredMessage } from '../messages'
import { expireRequest, expiresAt, PERMISSION_EXPIRY_PATH } from '../requests'
import { notifyDashboards } from '../sockets'
import { PermissionExpiryBody, PermissionExpiryResult } from '../schemas'

export const route = queueReceiverRoute({
  path: PERMISSION_EXPIRY_PATH,
  operationId: 'expirePermissionRequest',
  tags: ['Hooks'],
  summary: 'Queue receiver: expire a permission request nobody decided in 10 minutes',
  description:
    'Signed queue deliveries only (`Upstash-Signature`), published by `POST /api/hooks/classify` for each dangerous call of a ' +
    'known owner, delayed to its `expiresAt` (10 minutes after creation). A request still `pending` at its expiry is marked ' +
    '`expired` (a denial) and its owner’s open dashboards get `{type: "permission_expired", requestId, expiresAt}` on ' +
    '`GET /api/permissions/socket`: within the queue’s delay of the expiry, not only when someone next reads. Exactly one ' +
    'delivery changes it and tells the dashboards (a conditional update): a redelivery, or a request decided, already expired ' +
    'or gone, answers `expired: false` and changes nothing. A delivery that arrives before the expiry publishes itself again ' +
    'for the time left. The poll, the list and decisions judge the expiry with the server’s clock themselves, so none of ' +
    'them waits for this job.',
  request: { body: jsonBody(PermissionExpiryBody) },
  responses: {
    200: ok(PermissionExpiryResult, 'Expired now, or nothing to do'),
  },
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { requestId } = c.req.valid('json')
  const { services } = c.var
  const now = new Date()
  const { expired, row } = await expireRequest(services.reader, requestId, now)
  if (expired) {
    log.info('permissions.expired', { requestId, owned: expired.userId !== null })
    if (expired.userId) await notifyDashboards(c, expired.userId, expiredMessage(expired))
    return c.json({ ok: true as const, requestId, expired: true }, 200)
  }
  if (row && row.status === 'pending') {
    // Delivered early (clock skew): due again at its expiry.
    const delaySec = Math.max(1, Math.ceil((expiresAt(row).getTime() - now.getTime()) / 1000))
    await services.queue.publish(PERMISSION_EXPIRY_PATH, { requestId }, { delaySec, retries: 3 }).catch((e) => {
      log.warn('permissions.expiry_republish_failed', { requestId, ...errorFields(e) })
      throw e
    })
  }
  return c.json({ ok: true as const, requestId, expired: false }, 200)
}
