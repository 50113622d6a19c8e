import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { asUser } from '../../../lib/db/rls'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { devices } from '../../../schema'
import { newPairingCode, PAIRING_CODE_LENGTH, pairingUrl } from '../pairing'
import { deviceNameField } from '../schemas'

export const DEFAULT_DEVICE_NAME = 'My Device'

const RegisterQuery = z.object({ name: deviceNameField(DEFAULT_DEVICE_NAME) })

const RegisteredSchema = z
  .object({
    success: z.literal(true),
    deviceId: z.string().max(255),
    pairingCode: z.string().max(1024).openapi({ description: `${PAIRING_CODE_LENGTH} characters of [A-Z0-9]`, example: 'K7Q2ZD' }),
    pairingUrl: z.string().max(2048).openapi({ example: '/dashboard/devices?pair=K7Q2ZD&id=0b0e…' }),
  })
  .openapi('DeviceRegistered')

export const route = signedInRoute({
  method: 'put',
  path: '/api/devices',
  operationId: 'registerDevice',
  tags: ['Devices'],
  summary: 'Register a device awaiting approval',
  description:
    'Creates a `pending` device with a pairing code; the dashboard approves or denies it at `pairingUrl` ' +
    '(`/dashboard/devices?pair=<code>&id=<deviceId>`). Records the client IP.',
  request: { query: RegisterQuery },
  responses: {
    200: ok(RegisteredSchema),
    400: errorResponse('`name` empty after trimming, longer than 64 characters or repeated (`VALIDATION`)'),
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const { name } = c.req.valid('query')
  const pairingCode = newPairingCode()
  const [device] = await asUser(c, (tx) =>
    tx
      .insert(devices)
      .values({ userId: c.var.user.id, name, status: 'pending', pairingCode, ip: c.var.services.clientIp(c) })
      .returning({ id: devices.id }),
  )
  return c.json({ success: true as const, deviceId: device.id, pairingCode, pairingUrl: pairingUrl(pairingCode, device.id) }, 200)
}
