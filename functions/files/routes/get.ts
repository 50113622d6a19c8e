import type { RouteHandler } from '@hono/zod-openapi'
import { downloadFile } from '../download'
import { STORAGE_QUOTA_BYTES } from '../quota'
import { listStored } from '../../../lib/files/records'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { fileJson } from '../item'
import { FileListSchema, FilesQuery } from '../schemas'

export const route = signedInRoute({
  method: 'get',
  path: '/api/files',
  operationId: 'getFiles',
  tags: ['Files'],
  summary: 'List the caller’s files, or download one (`?download=<id>`)',
  description:
    'Files are visible only to their uploader; only completely stored files are listed or served (an upload in progress is not).\n\n' +
    '- Without `download`: the caller’s files (of `agentId` when given), newest first, at most 1000, with `count` and `totalSize` ' +
    'of all that match.\n' +
    '- With `download=<id>`: the file’s bytes, streamed, with `Content-Type` (as uploaded, `application/octet-stream` when none), ' +
    '`Content-Disposition: attachment; filename="<name>"` and the real `Content-Length`. An id that is a path (it holds `/`, `\\` or ' +
    '`..`) is 403: ids are opaque, never paths, so such an id is refused as outside the upload directory without a lookup; so is a ' +
    'record whose object is not directly under the caller’s own storage prefix. An unknown id, another user’s, or a file whose ' +
    'object has gone from storage is 404 (in the last case the record is removed and its bytes count no more).',
  request: { query: FilesQuery },
  responses: {
    200: {
      description: 'The list (JSON), or the file’s bytes (any type) when `download` is given',
      content: {
        'application/json': { schema: FileListSchema },
        '*/*': { schema: { type: 'string', format: 'binary', maxLength: STORAGE_QUOTA_BYTES.network, description: 'The file’s bytes, with the type it was uploaded with (`application/octet-stream` when none)' } },
      },
      headers: {
        'Content-Disposition': { description: 'Downloads: `attachment; filename="<name>"`', schema: { type: 'string', maxLength: 200 } },
        'Content-Length': { description: 'Downloads: the file’s size in bytes', schema: { type: 'integer', format: 'int64', minimum: 0, maximum: STORAGE_QUOTA_BYTES.network } },
      },
    },
    400: errorResponse('A query value past its bound: `agentId` or `download` over 255 characters, an empty `download` (`VALIDATION`)'),
    403: errorResponse('`Path outside upload directory`: the download id is a path, or the file’s object lies outside the caller’s uploads (`PATH_OUTSIDE_UPLOADS`)'),
    404: errorResponse('`File not found`: no such file of the caller’s, or its object is gone (`NOT_FOUND`)'),
    500: errorResponse('Unexpected failure (`INTERNAL`)'),
    502: errorResponse('`Storage unavailable`: a download storage refused, failed or did not answer in time (`STORAGE_UNAVAILABLE`); the file stays listed'),
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const { agentId, download } = c.req.valid('query')
  if (download !== undefined) {
    const file = await downloadFile(c.var.services, c.var.user.id, download)
    return c.body(file.body, 200, file.headers)
  }
  const list = await listStored(c.var.services.reader, c.var.user.id, agentId)
  return c.json({ files: list.files.map(fileJson), totalSize: list.totalSize, count: list.count }, 200)
}
