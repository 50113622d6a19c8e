import type { Db } from '../../lib/db/rls'
import { ApiError } from '../../lib/http/errors'
import { errorFields, log } from '../../lib/log'
import type { Storage } from '../../lib/context'
import { isInUserPrefix } from './names'
import { type DeletingRecord, finishDeleting } from '../../lib/files/records'

/**
 * Deletes objects that have no record (an upload whose record is already gone), best effort: one that cannot be
 * deleted is never served; it is logged (`files.orphan_object`) for cleanup.
 */
export async function deleteObjects(storage: Storage, userId: string, keys: string[]) {
  for (const key of keys) {
    await storage.delete(key).catch((e) => log.warn('files.orphan_object', { userId, fileId: key.split('/').pop(), ...errorFields(e) }))
  }
}

/** Storage could not delete an object: its record stays `deleting` and counted until a retry. */
export const storageUnavailable = () => new ApiError('STORAGE_UNAVAILABLE')

export interface PurgeResult {
  /** Bytes given back: those of the records whose objects are gone. */
  freedBytes: number
  /** Records whose object could not be deleted: they stay `deleting`, counted, for the next try. */
  failed: number
}

/**
 * The rest of a delete for records already `deleting`: each object is deleted from storage, and only the records
 * whose objects are gone are then removed with their bytes (records.ts `finishDeleting`). A failed object delete
 * leaves its record `deleting` and its bytes counted; it is logged (`files.delete_failed`) and tried again by the
 * next upload of the user (records.ts `startUpload` lists every `deleting` record), a repeated file delete, or a
 * repeated agent delete. Safe to run twice at once: deleting an object twice is harmless, and a record is given
 * back once.
 */
export async function purgeDeleting(services: { db: Db; storage: Storage }, userId: string, records: DeletingRecord[]): Promise<PurgeResult> {
  const gone: string[] = []
  for (const r of records) {
    try {
      // A record never names another user's object; should one, that object is not this user's to delete.
      if (isInUserPrefix(r.storageKey, userId)) await services.storage.delete(r.storageKey)
      else log.warn('files.key_outside_prefix', { fileId: r.id, userId })
      gone.push(r.id)
    } catch (e) {
      log.warn('files.delete_failed', { userId, fileId: r.id, ...errorFields(e) })
    }
  }
  const freedBytes = await finishDeleting(services.db, userId, gone)
  return { freedBytes, failed: records.length - gone.length }
}
