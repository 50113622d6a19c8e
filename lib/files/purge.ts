import type { Queue } from '../context'

/**
 * Where the files family receives, from the queue, the job of finishing a user's deletes (functions/files/routes/purge.ts):
 * each `deleting` record's object deleted from storage, then the record and its bytes. Published by an agent's delete,
 * whose Worker does not carry the storage client.
 */
export const FILES_PURGE_PATH = '/api/queue/files-purge'

/** Retried by the queue while storage refuses (the records stay counted meanwhile). */
export const queueFilesPurge = (queue: Queue, userId: string) => queue.publish(FILES_PURGE_PATH, { userId }, { retries: 5 })
