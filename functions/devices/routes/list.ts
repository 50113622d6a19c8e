import type { RouteHandler } from '@hono/zod-openapi'
import { asUser } from '../../../lib/db/rls'
import { ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { deviceLists } from '../lists'
import { DeviceListsSchema } from '../schemas'

export const route = signedInRoute({
  method: 'get',
  path: '/api/devices',
  operationId: 'listDevices',
  tags: ['Devices'],
  summary: "The caller's pending and approved devices",
  description: 'Newest first. Denied and revoked devices are not listed.',
  responses: {
    200: ok(DeviceListsSchema.openapi('DeviceLists')),
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const lists = await asUser(c, (tx) => deviceLists(tx, c.var.user.id))
  return c.json(lists, 200)
}
