/** Names of stored files: what a user's filename becomes, where its object lives, how a download names it. */

export const MAX_FILENAME_LENGTH = 128

/**
 * The spec's sanitizing, in its order: leading dots removed; every character outside `a-zA-Z0-9._-` becomes `_`
 * (one per character, astral ones included); cut to 128 characters; an empty result becomes `upload_<timestamp>`
 * (milliseconds since the epoch).
 */
export function sanitizeFilename(raw: string, now = Date.now()): string {
  const name = raw
    .replace(/^\.+/, '')
    .replace(/[^a-zA-Z0-9._-]/gu, '_')
    .slice(0, MAX_FILENAME_LENGTH)
  return name || `upload_${now}`
}

const MIME_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/

/**
 * The part's `Content-Type` as stored and served: its `type/subtype` lower-cased when well-formed (RFC 6838),
 * parameters dropped, else `application/octet-stream`. What is served back is never a header the client wrote.
 */
export function normalizeMimeType(raw: string | null | undefined): string {
  const essence = (raw ?? '').split(';')[0].trim().toLowerCase()
  return MIME_TYPE.test(essence) ? essence : 'application/octet-stream'
}

/** `attachment; filename="…"`: quotes, backslashes and anything outside printable ASCII replaced, so it always parses. */
export function attachmentDisposition(filename: string): string {
  return `attachment; filename="${filename.replace(/[^\x20-\x7e]|["\\]/g, '_')}"`
}

/** Where a user's file lives in storage: one prefix per user, the object named by the file's id only. */
export const storageKeyFor = (userId: string, fileId: string) => `files/${userId}/${fileId}`

/** The key is one object directly under the user's own prefix (never a path that leaves it). */
export function isInUserPrefix(key: string, userId: string): boolean {
  const prefix = `files/${userId}/`
  if (!key.startsWith(prefix)) return false
  const rest = key.slice(prefix.length)
  return rest !== '' && !/[/\\\0]/.test(rest) && rest !== '.' && rest !== '..'
}

/**
 * A download id that is a path rather than an id (file ids are UUIDs): a separator, `..`, or `.` alone. The legacy
 * API took a path under the upload directory here; such an id is refused as outside it (403), never looked up.
 */
export const isPathLikeId = (id: string) => /[/\\]|\.\./.test(id) || id === '.'
