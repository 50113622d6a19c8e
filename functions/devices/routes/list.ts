import { createRoute } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { requireSession } from '../../../lib/auth/session'
import type { AppEnv } from '../../../lib/context'
import { asUser } from '../../../lib/db/rls'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { deviceLists } from '../lists'
import { DeviceListsSchema } from '../schemas'

export const route = createRoute({
  method: 'get',
  path: '/api/devices',
  tags: ['Devices'],
  summary: "The caller's pending and approved devices",
  description: 'Newest first. Denied and revoked devices are not listed.',
  middleware: [requireSession] as const,
  security: [{ session: [] }],
  responses: {
    200: ok(DeviceListsSchema.openapi('DeviceLists')),
    401: errorResponse('No session'),
    500: errorResponse('Internal server error'),
  },
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const lists = await asUser(c, (tx) => deviceLists(tx, c.var.user!.id))
  return c.json(lists, 200)
}
