import { and, asc, eq, isNull, lt } from 'drizzle-orm'
import type { Services } from '../../lib/context'
import { asService } from '../../lib/db/rls'
import { errorFields, log } from '../../lib/log'
import { chatJobs } from '../../schema'
import { CHAT_QUEUE_PATH, CHAT_RETRIES } from './jobs'

/** Where the sweep's cron delivers (`POST`, signed). */
export const CHAT_SWEEP_PATH = '/api/queue/chat/sweep'
/** Every 10 minutes. */
export const CHAT_SWEEP_CRON = '*/10 * * * *'
/**
 * A job still `queued` this long after its last change waits on a message that is lost (a queue that lost it, a
 * publish that failed after the job was written): longer than the queue's retries take (QStash's backoff for
 * 3 retries stays within minutes), so a job between two retries is not published twice.
 */
export const QUEUED_SWEEP_AFTER_MS = 30 * 60_000
/** Jobs published again per sweep, oldest first; the rest wait for the next run. */
export const SWEEP_BATCH = 200

/**
 * Publishes again each chat job left `queued` (and not claimed) past `QUEUED_SWEEP_AFTER_MS`, under its own id as the
 * deduplication id, as `POST /api/gateway/chat` published it: a delivery of a job that has moved on meanwhile changes
 * nothing (`deliverChatJob`), and the runtime dedupes on the job id. Stamps the job's `updated_at` so the next sweep
 * waits the full bound again. A publish that fails is counted and left for the next sweep.
 */
export async function sweepQueuedJobs(services: Pick<Services, 'db' | 'queue'>, now = Date.now()): Promise<{ found: number; republished: number; failed: number }> {
  const before = new Date(now - QUEUED_SWEEP_AFTER_MS)
  const stale = await asService(services.db, 'queuedSweep', (tx) =>
    tx
      .select({ id: chatJobs.id })
      .from(chatJobs)
      .where(and(eq(chatJobs.status, 'queued'), isNull(chatJobs.claimedByAgentId), lt(chatJobs.updatedAt, before)))
      .orderBy(asc(chatJobs.updatedAt))
      .limit(SWEEP_BATCH),
  )
  let republished = 0
  let failed = 0
  for (const { id } of stale) {
    try {
      await services.queue.publish(CHAT_QUEUE_PATH, { jobId: id }, { deduplicationId: id, retries: CHAT_RETRIES })
      await asService(services.db, 'queuedSweep', (tx) =>
        tx.update(chatJobs).set({ updatedAt: new Date(now) }).where(and(eq(chatJobs.id, id), eq(chatJobs.status, 'queued'))),
      )
      republished++
    } catch (e) {
      failed++
      log.warn('chat.sweep_publish_failed', { jobId: id, ...errorFields(e) })
    }
  }
  if (stale.length) log.info('chat.swept', { found: stale.length, republished, failed })
  return { found: stale.length, republished, failed }
}
