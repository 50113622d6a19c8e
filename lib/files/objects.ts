import { errorFields, log } from '../log'
import type { Storage } from '../storage/types'

/**
 * Deletes objects whose records are already gone, best effort: one that cannot be deleted has no record, so it is
 * never served; it is logged (`files.orphan_object`) for cleanup.
 */
export async function deleteObjects(storage: Storage, userId: string, keys: string[]) {
  for (const key of keys) {
    await storage.delete(key).catch((e) => log.warn('files.orphan_object', { userId, fileId: key.split('/').pop(), ...errorFields(e) }))
  }
}
