import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import type { AppEnv } from '../../../lib/context'
import { purgeDeleting, storageUnavailable } from '../objects'
import { FILES_PURGE_PATH, queueFilesPurge } from '../../../lib/files/purge'
import { deletingRecords, MAX_FINISHED_PER_UPLOAD } from '../../../lib/files/records'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { queueReceiverRoute } from '../../../lib/http/routes'
import { jsonBody } from '../../../lib/http/validation'
import { log } from '../../../lib/log'

/**
 * Slices of `MAX_FINISHED_PER_UPLOAD` records one delivery works off; past them, the rest is queued again. 500
 * object deletes (and their retries) keep a delivery within a Worker's subrequests per request.
 */
const MAX_SLICES = 5

export const route = queueReceiverRoute({
  path: FILES_PURGE_PATH,
  operationId: 'deliverFilesPurge',
  tags: ['Files'],
  summary: 'Queue receiver: finish deleting a user’s files',
  description:
    'Signed queue deliveries only (`Upstash-Signature`), published by `DELETE /api/agents/{id}` for the files of the ' +
    'deleted agent (hidden at once, still counted). Each of the user’s files being deleted has its object deleted from ' +
    'storage, and only then does its record go and its bytes stop counting against the quota. 502 ' +
    '(`STORAGE_UNAVAILABLE`) when storage would not delete one: the queue retries, and the files stay hidden and counted ' +
    'meanwhile (the user’s next upload retries them too). Past 500 files in one delivery, the rest is queued again.',
  request: { body: jsonBody(z.object({ userId: z.string().min(1).max(255) })) },
  responses: {
    200: ok(
      z.object({ ok: z.literal(true), purged: z.number().int().min(0).max(MAX_SLICES * MAX_FINISHED_PER_UPLOAD).openapi({ format: 'int32', description: 'Files deleted' }) }),
      'Done: none left, or the rest queued again',
    ),
    502: errorResponse('Storage could not delete an object (`STORAGE_UNAVAILABLE`): retried by the queue'),
  },
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { userId } = c.req.valid('json')
  const { services } = c.var
  let purged = 0
  for (let slice = 0; ; slice++) {
    const records = await deletingRecords(services.db, userId)
    if (!records.length) break
    if (slice === MAX_SLICES) {
      await queueFilesPurge(services.queue, userId)
      break
    }
    const { failed } = await purgeDeleting(services, userId, records)
    purged += records.length - failed
    if (failed) {
      log.warn('files.purge_failed', { userId, purged, failed })
      throw storageUnavailable()
    }
    if (records.length < MAX_FINISHED_PER_UPLOAD) break
  }
  log.info('files.purged', { userId, purged })
  return c.json({ ok: true as const, purged }, 200)
}
