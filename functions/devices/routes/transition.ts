import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { and, eq, sql } from 'drizzle-orm'
import { asUser } from '../../../lib/db/rls'
import { ApiError } from '../../../lib/http/errors'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { jsonBody } from '../../../lib/http/validation'
import { devices } from '../../../schema'
import { deviceLists } from '../lists'
import { DeviceListsSchema } from '../schemas'
import { DEVICE_ACTIONS, deviceNotFound, TRANSITIONS } from '../transitions'

const MISSING = 'Missing deviceId or action'
const absent = (input: unknown) => input === undefined || input === null || input === ''

const TransitionBody = z
  .object(
    {
      deviceId: z.string({ error: (iss) => (absent(iss.input) ? MISSING : 'deviceId must be a string') }).max(255).min(1, MISSING),
      action: z.enum(DEVICE_ACTIONS, { error: (iss) => (absent(iss.input) ? MISSING : 'Invalid action') }),
    },
    { error: 'Request body must be a JSON object' },
  )
  .openapi('DeviceAction')

export const route = signedInRoute({
  method: 'post',
  path: '/api/devices',
  operationId: 'updateDeviceStatus',
  tags: ['Devices'],
  summary: 'Approve, deny or revoke one of the caller’s devices',
  description:
    '`approve` and `deny` move a `pending` device to `approved` or `denied`; `revoke` moves an `approved` one to ' +
    '`revoked`. Denied and revoked are final. The move is one conditional update, so of concurrent requests ' +
    'exactly one wins. Answers with the caller’s lists after the change.',
  request: { body: jsonBody(TransitionBody) },
  responses: {
    200: ok(DeviceListsSchema.extend({ success: z.literal(true) }).openapi('DeviceActionResult')),
    400: errorResponse(
      '`Missing deviceId or action` or `Invalid action` (`VALIDATION`); `Device is not pending` (approve or deny); ' +
        '`Device is not approved` (revoke); `Invalid JSON body`',
    ),
    404: errorResponse('`Device not found`: unknown, or not the caller’s'),
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const { deviceId, action } = c.req.valid('json')
  const move = TRANSITIONS[action]
  const me = c.var.user.id
  const lists = await asUser(c, async (tx) => {
    const mine = and(eq(devices.id, deviceId), eq(devices.userId, me))
    // Conditional on the expected status: a concurrent move makes this match nothing rather than win twice.
    const moved = await tx
      .update(devices)
      .set({ status: move.to, lastSeen: sql`now()` })
      .where(and(mine, eq(devices.status, move.from)))
      .returning({ id: devices.id })
    if (moved.length === 0) {
      const [existing] = await tx.select({ id: devices.id }).from(devices).where(mine).limit(1)
      throw existing ? new ApiError('INVALID_DEVICE_STATE', move.refusal) : deviceNotFound()
    }
    return deviceLists(tx, me)
  })
  return c.json({ success: true as const, ...lists }, 200)
}
