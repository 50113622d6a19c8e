import type { Services } from '../../lib/context'
import { ApiError } from '../../lib/http/errors'
import { errorFields, log } from '../../lib/log'
import { storageUnavailable } from './objects'
import { attachmentDisposition, isInUserPrefix, isPathLikeId } from './names'
import { findStored, removeStored } from '../../lib/files/records'

export const fileNotFound = () => new ApiError('NOT_FOUND', 'File not found')
const outsideUploads = () => new ApiError('PATH_OUTSIDE_UPLOADS')

/**
 * One of the caller's stored files, streamed from storage with its type, an attachment disposition and its real
 * length. 403 for an id that is a path or a record whose object lies outside the caller's prefix; 404 for anything
 * else not found, including a record whose object is gone (the record is then removed and its bytes given back).
 */
export async function downloadFile(services: Services, userId: string, fileId: string): Promise<{ body: ReadableStream<Uint8Array>; headers: Record<string, string> }> {
  if (isPathLikeId(fileId)) throw outsideUploads()
  const file = await findStored(services.reader, userId, fileId)
  if (!file) throw fileNotFound()
  if (!isInUserPrefix(file.storageKey, userId)) {
    log.warn('files.key_outside_prefix', { fileId, userId })
    throw outsideUploads()
  }
  const object = await services.storage.get(file.storageKey).catch((e) => {
    log.warn('files.read_failed', { fileId, ...errorFields(e) })
    throw storageUnavailable()
  })
  if (!object) {
    await removeStored(services.db, userId, fileId)
    log.warn('files.object_missing', { fileId, userId })
    throw fileNotFound()
  }
  return {
    body: object.body,
    headers: {
      'Content-Type': file.mimeType || 'application/octet-stream',
      'Content-Disposition': attachmentDisposition(file.filename),
      'Content-Length': String(object.size),
      // Served as a download, never rendered or sniffed on the API's origin.
      'X-Content-Type-Options': 'nosniff',
      'Content-Security-Policy': "default-src 'none'; sandbox",
    },
  }
}
