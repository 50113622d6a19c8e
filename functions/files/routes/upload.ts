import type { RouteHandler } from '@hono/zod-openapi'
import { PAID_ACCESS_RULE, PLAN_REQUIRED_DOC } from '../../../lib/auth/plan'
import { STORAGE_QUOTA_BYTES } from '../quota'
import { MAX_FILENAME_LENGTH } from '../names'
import { receiveUpload } from '../upload'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { uploadedJson } from '../item'
import { UploadAnswer } from '../schemas'

const gib = (bytes: number) => `${bytes / 1024 ** 3} GiB (${bytes.toLocaleString('en')} bytes)`
const quotas = Object.entries(STORAGE_QUOTA_BYTES)
  .map(([plan, bytes]) => `${plan} ${gib(bytes)}`)
  .join(', ')

export const route = signedInRoute({
  method: 'post',
  path: '/api/files',
  operationId: 'uploadFile',
  tags: ['Files'],
  summary: 'Upload a file for one of the caller’s agents',
  description:
    'A `multipart/form-data` body with `agentId` (one of the caller’s agents) and `file`, in either order: the body is ' +
    'read as a stream and the file goes to storage as it arrives. When `file` comes first it is streamed the same way ' +
    'into its object, recorded as uploading for no agent yet; the `agentId` after it is then checked (404 when it is ' +
    'not the caller’s, 400 when missing) and the file becomes that agent’s, or the object is deleted. Nothing is ' +
    'buffered in memory either way. Other fields (up to 64 KiB each) are ignored.\n\n' +
    `**Paid access.** Uploading is a use: it needs paid access at the moment of use (${PAID_ACCESS_RULE}), checked before ` +
    'the body is read: 402 otherwise. Files kept from before a lapse can still be listed, downloaded and deleted.\n\n' +
    `**Storage quota.** The caller’s files (stored and uploading) may hold: ${quotas}; admins network’s; the trial runs ` +
    'on solo. The 1 MB limit of other bodies does not apply here: the quota does. ' +
    'What comes before the file’s data (`agentId`, other fields, part headers) may take 64 KiB; `agentId` after it 256 bytes. A `Content-Length` that ' +
    'cannot fit, even less those 64 KiB, is refused (413) before the body is read. At the `file` part the bytes are ' +
    'reserved atomically: what is left of `Content-Length` (without one, all the caller’s remaining quota, until the ' +
    'upload ends), so two uploads that together pass the quota cannot both land; the first to reserve wins. A body ' +
    'without `Content-Length` is counted as it streams and refused (413) once it passes the reservation. The bytes ' +
    'not used are given back when the upload completes; all of them when it fails or the file is deleted, but only once ' +
    'storage no longer holds the file’s object: a delete storage refused keeps the bytes counted, and each upload first ' +
    'tries such deletes again, up to 100 (stale uploads, pending for over a day, are deleted the same way), before it ' +
    'checks the quota.\n\n' +
    `**Names.** The stored name is the part’s filename with leading dots removed, every character outside ` +
    `\`a-zA-Z0-9._-\` made \`_\`, cut to ${MAX_FILENAME_LENGTH} characters; an empty result becomes \`upload_<timestamp>\` ` +
    '(milliseconds). The stored type is the part’s `Content-Type` (its `type/subtype`), `application/octet-stream` when ' +
    'none or malformed.\n\n' +
    '**Never half.** The file is recorded as uploading until its object is completely written, and is listed and served ' +
    'only after; a failed, cut or refused upload leaves nothing behind.',
  request: {
    body: {
      required: true,
      content: {
        'multipart/form-data': {
          schema: {
            type: 'object',
            required: ['agentId', 'file'],
            properties: {
              agentId: { type: 'string', maxLength: 255, description: 'One of the caller’s agents; before or after `file`' },
              file: { type: 'string', format: 'binary', maxLength: STORAGE_QUOTA_BYTES.network, description: 'The file, with its filename and type' },
            },
          },
        },
      },
    },
  },
  responses: {
    201: ok(UploadAnswer, 'Stored'),
    400: errorResponse(
      '`agentId is required`, `file is required`, `Only one file per upload`, `agentId is too long` ' +
        '(`VALIDATION`, with `issues`); or the body is not well-formed multipart: another `Content-Type`, no boundary, cut off, ' +
        'not closed within its `Content-Length`, over 64 KiB before the file, or another field over 64 KiB ' +
        '(`MALFORMED_MULTIPART`)',
    ),
    402: errorResponse(PLAN_REQUIRED_DOC),
    404: errorResponse('`Agent not found`: `agentId` is not one of the caller’s agents (`NOT_FOUND`)'),
    413: errorResponse('`Storage limit exceeded`: the upload does not fit the caller’s quota; `plan`, `limitBytes` and `usedBytes` (`STORAGE_LIMIT`)'),
    500: errorResponse('Unexpected failure (`INTERNAL`); nothing was kept'),
    502: errorResponse('`Storage unavailable`: storage refused the file, failed or did not answer in time (`STORAGE_UNAVAILABLE`); nothing was kept or counted'),
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const file = await receiveUpload(c.var.services, c.var.user, c.req.raw)
  return c.json({ success: true as const, file: uploadedJson(file) }, 201)
}
