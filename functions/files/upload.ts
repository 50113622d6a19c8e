import { findOwnAgent } from '../../lib/agents/access'
import { requirePaidAccess } from '../../lib/auth/plan'
import type { Services, SessionUser } from '../../lib/context'
import { ApiError } from '../../lib/http/errors'
import { isHostileText } from '../../lib/http/validation'
import { errorFields, log } from '../../lib/log'
import { boundaryOf, closingDelimiterBytes, MultipartError, MultipartReader, type Part } from './multipart'
import { normalizeMimeType, sanitizeFilename, storageKeyFor } from './names'
import { deleteObjects, purgeDeleting, storageUnavailable } from './objects'
import { type StorageQuota, storageQuota } from './quota'
import { markPendingDeleting, markStored, releasePending, reserveUpload, startUpload, type StoredFile } from '../../lib/files/records'

/**
 * What may come before the file's data (preamble, `agentId`, other fields, the file's part headers). Bounding it is
 * what lets a `Content-Length` be refused before the body is read: the reservation at the `file` part is then at
 * least `Content-Length` less this, so past the quota by that much it can only fail.
 */
export const MAX_BYTES_BEFORE_FILE = 64 * 1024
const MAX_AGENT_ID_BYTES = 256
/** Each ignored field: with the reader's 16 parts, what is not the file stays bounded even without `Content-Length`. */
const MAX_OTHER_FIELD_BYTES = 64 * 1024

export const storageLimitExceeded = (quota: StorageQuota, usedBytes: number) =>
  new ApiError('STORAGE_LIMIT', { extra: { plan: quota.plan, limitBytes: quota.limitBytes, usedBytes } })

const fieldError = (path: 'agentId' | 'file', message: string) =>
  new ApiError('VALIDATION', { message: message, extra: { issues: [{ path, message }] } })

const malformed = (message: string) => new ApiError('MALFORMED_MULTIPART', message)

interface Written {
  id: string
  key: string
  size: number
  /** Null when the file came before `agentId`: its pending record is bound to the agent once stored. */
  agentId: string | null
}

/**
 * `POST /api/files`: the body is read as a stream, part by part (functions/files/multipart.ts), and the file's bytes go
 * straight to storage (`Storage.putStream`); nothing holds the whole file. In order:
 * 0. the caller's paid access (402 without: uploading is a use);
 * 1. the caller's quota and usage (stale pending uploads marked `deleting`, usage recounted), then every `deleting`
 *    record's object deleted and the record with it (deletes that failed before are tried again here, before the
 *    quota is checked); a `Content-Length` that cannot fit, whatever comes before the file, is 413 before a byte of
 *    the body is read;
 * 2. `agentId`, before or after `file`, which must be the caller's agent (404);
 * 3. at the `file` part, its bytes are reserved (`reserveUpload`: one conditional upsert, with the pending record):
 *    what is left of `Content-Length`, or without one all the caller's remaining quota; then the stream is written,
 *    counted, and refused (413) once it passes the reservation. A file sent before `agentId` is streamed the same
 *    way, to its object, under a pending record of no agent yet (nothing is held in memory);
 * 4. the rest of the body must close properly; then the record is `stored` with its exact size (and, for a file
 *    that came first, bound to the agent named after it, checked again under the agent's lock).
 * Any failure after the reservation deletes whatever was written and then gives the bytes back.
 */
export async function receiveUpload(services: Services, user: SessionUser, request: Request): Promise<StoredFile> {
  const boundary = boundaryOf(request.headers.get('content-type'))
  if (!boundary) throw malformed('Content-Type must be multipart/form-data with a boundary')
  const declared = contentLength(request.headers.get('content-length'))

  // Uploading is a use: paid access first (402), before the usage is counted or a byte of the body is read.
  const { plan } = await requirePaidAccess(services, user.id)
  const start = await startUpload(services.db, user.id)
  const purged = await purgeDeleting(services, user.id, start.deleting)
  const usedBytes = start.usedBytes - purged.freedBytes
  const quota = storageQuota(plan)
  const remaining = quota.limitBytes - usedBytes
  if (declared !== null && declared - MAX_BYTES_BEFORE_FILE - closingDelimiterBytes(boundary) > remaining) {
    throw storageLimitExceeded(quota, usedBytes)
  }
  if (!request.body) throw fieldError('agentId', 'agentId is required')

  const form = new MultipartReader(request.body, boundary)
  let written: Written | null = null
  try {
    let agentId: string | null = null
    for (let part = await form.next(); part; part = await form.next()) {
      if (!written && form.consumed > MAX_BYTES_BEFORE_FILE) throw malformed('The fields before file take more than 64 KiB')
      if (part.name === 'agentId') {
        if (agentId !== null) throw fieldError('agentId', 'agentId must be given once')
        agentId = await readAgentId(part)
        await findOwnAgent(services.db, user.id, agentId) // 404 Agent not found: unknown, or another user's
      } else if (part.name === 'file') {
        if (written) throw fieldError('file', 'Only one file per upload')
        // What is left of the body, less its closing delimiter: at most the file's size (a little more when other
        // fields follow it). Without a length, the rest of the quota.
        const reserve = Math.max(0, declared !== null ? declared - form.consumed - closingDelimiterBytes(boundary) : remaining)
        written = await writeFile(services, user.id, quota, agentId, part, reserve, declared !== null)
      } else {
        await skipField(part) // any other field is read past and ignored, up to a bound
      }
    }
    if (agentId === null) throw fieldError('agentId', 'agentId is required')
    if (!written) throw fieldError('file', 'file is required')
    const stored = await markStored(services.db, user.id, written.id, written.size, written.agentId === null ? agentId : undefined)
    if (!stored) throw new ApiError('NOT_FOUND', 'Agent not found') // deleted (with its records) meanwhile
    log.info('files.uploaded', { fileId: stored.id, agentId, size: stored.size })
    return stored
  } catch (e) {
    await form.cancel(e)
    if (written) await discard(services, user.id, written)
    if (e instanceof MultipartError) throw malformed(e.message)
    throw e
  }
}

/**
 * Reserves the bytes with a pending record, then streams the part into storage under a counter. On any failure the
 * reservation goes back (the store leaves no object behind a failed `putStream`).
 */
async function writeFile(
  services: Services,
  userId: string,
  quota: StorageQuota,
  agentId: string | null,
  part: Part,
  reserve: number,
  lengthKnown: boolean,
): Promise<Written> {
  const id = crypto.randomUUID()
  const key = storageKeyFor(userId, id)
  const record = { id, agentId, filename: sanitizeFilename(part.filename ?? ''), storageKey: key, size: reserve, mimeType: normalizeMimeType(part.contentType) }
  const reservation = await reserveUpload(services.db, userId, quota.limitBytes, record)
  if (!reservation.reserved) throw storageLimitExceeded(quota, reservation.usedBytes)
  // Past the reservation: with a Content-Length the body does not close within it; without one, the quota is spent.
  const over = () =>
    lengthKnown ? new MultipartError('Malformed multipart body: no closing boundary within its Content-Length') : storageLimitExceeded(quota, quota.limitBytes)
  try {
    const { size } = await services.storage.putStream(key, capped(part.body, reserve, over), record.mimeType, { maxBytes: reserve })
    return { id, key, size, agentId }
  } catch (e) {
    await releasePending(services.db, userId, id).catch((err) => log.warn('files.release_failed', { fileId: id, ...errorFields(err) }))
    if (e instanceof ApiError || e instanceof MultipartError) throw e
    log.warn('files.store_failed', { fileId: id, ...errorFields(e) })
    throw storageUnavailable() // refused, failed or not answered within its deadline: nothing kept, nothing counted
  }
}

/** Passes `body` through, failing with `over()` once more than `max` bytes have gone by. */
function capped(body: ReadableStream<Uint8Array>, max: number, over: () => Error): ReadableStream<Uint8Array> {
  let count = 0
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        count += chunk.byteLength
        if (count > max) throw over()
        controller.enqueue(chunk)
      },
    }),
  )
}

async function readAgentId(part: Part): Promise<string> {
  const reader = part.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    size += r.value.byteLength
    if (size > MAX_AGENT_ID_BYTES) throw fieldError('agentId', 'agentId is too long')
    chunks.push(r.value)
  }
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(await new Blob(chunks as BlobPart[]).arrayBuffer())
  } catch {
    throw fieldError('agentId', 'agentId must be UTF-8 text')
  }
  const agentId = text.trim()
  if (!agentId) throw fieldError('agentId', 'agentId is required')
  if (isHostileText(agentId)) throw fieldError('agentId', 'Text must not contain NUL or unpaired surrogate characters')
  return agentId
}

async function skipField(part: Part) {
  const reader = part.body.getReader()
  let size = 0
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    size += r.value.byteLength
    if (size > MAX_OTHER_FIELD_BYTES) throw malformed(`The field ${JSON.stringify(part.name.slice(0, 64))} is over 64 KiB`)
  }
}

/**
 * A written upload that will not be recorded: its record becomes `deleting`, its object is deleted, then the record
 * and its bytes go (a failed object delete stays counted, for the next try). Without a pending record (the agent's
 * delete took it), the object is deleted best effort (or logged as an orphan).
 */
async function discard(services: Services, userId: string, written: Written) {
  const record = await markPendingDeleting(services.db, userId, written.id).catch((e) => {
    log.warn('files.release_failed', { fileId: written.id, ...errorFields(e) })
    return null
  })
  if (record) await purgeDeleting(services, userId, [record]).catch((e) => log.warn('files.release_failed', { fileId: written.id, ...errorFields(e) }))
  else await deleteObjects(services.storage, userId, [written.key])
}

/** A `Content-Length` as a number; null when absent or not a plain non-negative integer. */
function contentLength(header: string | null): number | null {
  if (header === null || !/^\d{1,16}$/.test(header.trim())) return null
  return Number(header.trim())
}
