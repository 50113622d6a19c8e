import { z } from '@hono/zod-openapi'
import { MAX_FILENAME_LENGTH } from './names'
import { STORAGE_QUOTA_BYTES } from './quota'
import { MAX_LISTED_FILES } from '../../lib/files/records'

const id = (description: string) => z.string().max(255).openapi({ description })
/** Bytes: never more than the largest quota (network's), which bounds every file and every user's total. */
const bytes = (description: string) => z.number().int().min(0).max(STORAGE_QUOTA_BYTES.network).openapi({ format: 'int64', description })
const url = z.string().max(300).openapi({ description: 'Where to download it: `/api/files?download=<id>`', example: '/api/files?download=6f1c…' })
const filename = (description: string) => z.string().max(MAX_FILENAME_LENGTH + 32).openapi({ description, example: 'report_2026.pdf' })
const mime = (description: string) => z.string().max(255).openapi({ description, example: 'application/pdf' })
const time = (description: string) => z.string().max(64).openapi({ format: 'date-time', description })

/** A stored file as listed (spec 2 "File"). */
export const FileSchema = z
  .object({
    id: id('The file id'),
    filename: filename('The sanitized name it was uploaded under'),
    url,
    size: bytes('Bytes'),
    mimeType: mime('The type it was uploaded with (`application/octet-stream` when none or malformed)'),
    agentId: id('The agent it was uploaded for'),
    createdAt: time('When the upload completed'),
  })
  .openapi('File')

/** The same file as the upload answers it: `name`, `type` and `uploaded` for `filename`, `mimeType`, `createdAt`. */
export const UploadedFileSchema = z
  .object({
    id: id('The file id'),
    name: filename('The sanitized filename'),
    url,
    size: bytes('Bytes stored'),
    type: mime('The stored type'),
    agentId: id('The agent it was uploaded for'),
    uploaded: time('When the upload completed'),
  })
  .openapi('UploadedFile')

export const FileListSchema = z
  .object({
    files: z.array(FileSchema).max(MAX_LISTED_FILES).openapi({ description: `The caller's stored files, newest first (at most ${MAX_LISTED_FILES})` }),
    totalSize: bytes('Bytes of all the matching files'),
    count: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).openapi({ format: 'int64', description: 'How many files match (more than `files` holds past the first 1000)' }),
  })
  .openapi('FileList')

export const FilesQuery = z.object({
  agentId: z.string().max(255).optional().openapi({ description: 'Only the files of this agent (another user’s agent: an empty list)' }),
  download: z.string().min(1).max(255).optional().openapi({ description: 'A file id: answer that file’s bytes instead of the list' }),
})

export const UploadAnswer = z.object({ success: z.literal(true), file: UploadedFileSchema }).openapi('FileUploaded')

export const DeleteFileBody = z
  .object({ fileId: z.string({ error: 'fileId is required' }).min(1, 'fileId is required').max(255) })
  .openapi('DeleteFileBody')

export const DeleteAnswer = z.object({ success: z.literal(true), fileId: id('The deleted file') }).openapi('FileDeleted')
