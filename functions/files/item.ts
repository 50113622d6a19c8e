import type { StoredFile } from '../../lib/files/records'

const downloadUrl = (id: string) => `/api/files?download=${encodeURIComponent(id)}`

/** A stored file as listed. */
export const fileJson = (f: StoredFile) => ({
  id: f.id,
  filename: f.filename,
  url: downloadUrl(f.id),
  size: f.size,
  mimeType: f.mimeType,
  agentId: f.agentId,
  createdAt: f.createdAt.toISOString(),
})

/** A stored file as the upload answers it (the spec's `name`, `type`, `uploaded`). */
export const uploadedJson = (f: StoredFile) => ({
  id: f.id,
  name: f.filename,
  url: downloadUrl(f.id),
  size: f.size,
  type: f.mimeType,
  agentId: f.agentId,
  uploaded: f.createdAt.toISOString(),
})
