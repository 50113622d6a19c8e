import type { RouteHandler } from '@hono/zod-openapi'
import { fileNotFound } from '../download'
import { markFileDeleting } from '../../../lib/files/records'
import { purgeDeleting, storageUnavailable } from '../objects'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { jsonBody } from '../../../lib/http/validation'
import { log } from '../../../lib/log'
import { DeleteAnswer, DeleteFileBody } from '../schemas'

export const route = signedInRoute({
  method: 'delete',
  path: '/api/files',
  operationId: 'deleteFile',
  tags: ['Files'],
  summary: 'Delete one of the caller’s files',
  description:
    'The file is first marked as deleting (no longer listed or served), then its object is deleted from storage, and only ' +
    'then does the record go and its bytes stop counting against the quota: storage still held is never counted as free. ' +
    'Should storage fail to delete the object, the answer is 502 (`STORAGE_UNAVAILABLE`): the file stays hidden and its ' +
    'bytes stay counted until the delete is tried again, by sending this request again or, automatically, at the ' +
    'caller’s next upload (which retries every unfinished delete before checking the quota).',
  request: { body: jsonBody(DeleteFileBody) },
  responses: {
    200: ok(DeleteAnswer),
    400: errorResponse('`fileId is required` (`VALIDATION`); or invalid JSON (`INVALID_JSON`)'),
    404: errorResponse('`File not found`: no such file of the caller’s (`NOT_FOUND`)'),
    502: errorResponse('`Storage unavailable`: the object could not be deleted; the file is hidden and still counted until a retry (`STORAGE_UNAVAILABLE`)'),
    500: errorResponse('Unexpected failure (`INTERNAL`)'),
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const { fileId } = c.req.valid('json')
  const { services, user } = c.var
  const record = await markFileDeleting(services.db, user.id, fileId)
  if (!record) throw fileNotFound()
  const { failed } = await purgeDeleting(services, user.id, [record])
  if (failed) throw storageUnavailable()
  log.info('files.deleted', { fileId })
  return c.json({ success: true as const, fileId }, 200)
}
