import type { RouteHandler } from '@hono/zod-openapi'
import { fileNotFound } from '../../../lib/files/download'
import { removeStored } from '../../../lib/files/records'
import { deleteObjects } from '../../../lib/files/objects'
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
    'Removes the record first (the file is no longer listed or served, and its bytes no longer count against the quota), ' +
    'then the object in storage. Should that second step fail, the object is left without a record: it is never served, and ' +
    'the failure is logged (`files.orphan_object`) for cleanup.',
  request: { body: jsonBody(DeleteFileBody) },
  responses: {
    200: ok(DeleteAnswer),
    400: errorResponse('`fileId is required` (`VALIDATION`); or invalid JSON (`INVALID_JSON`)'),
    404: errorResponse('`File not found`: no such file of the caller’s (`NOT_FOUND`)'),
    500: errorResponse('Unexpected failure (`INTERNAL`)'),
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const { fileId } = c.req.valid('json')
  const { services, user } = c.var
  const key = await removeStored(services.db, user.id, fileId)
  if (!key) throw fileNotFound()
  await deleteObjects(services.storage, user.id, [key])
  log.info('files.deleted', { fileId })
  return c.json({ success: true as const, fileId }, 200)
}
