import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { sql } from 'drizzle-orm'
import { asUser } from '../../../lib/db/rls'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { devices } from '../../../schema'
import { blankJsonBodyIsEmptyObject } from '../../../lib/http/optional-body'
import { deviceNameField } from '../schemas'

export const DEFAULT_PAIRED_NAME = 'My iPhone'

const PairBody = z
  .object({ name: deviceNameField(DEFAULT_PAIRED_NAME) }, { error: 'Request body must be a JSON object' })
  .openapi('PairDevice')

const PairedSchema = z
  .object({
    success: z.literal(true),
    device: z.object({
      id: z.string().max(255),
      name: z.string().max(256),
      status: z.literal('approved'),
      pairedAt: z.string().max(64).openapi({ format: 'date-time' }),
    }),
  })
  .openapi('DevicePaired')

export const route = signedInRoute({
  method: 'post',
  path: '/api/devices/pair',
  operationId: 'pairDevice',
  tags: ['Devices'],
  summary: 'Pair a device directly (approved at once)',
  description: 'The body is optional: none, an empty one or `{}` pairs a device named `My iPhone`. Records the client IP.',
  middleware: [blankJsonBodyIsEmptyObject],
  request: { body: { required: false, content: { 'application/json': { schema: PairBody } } } },
  responses: {
    200: ok(PairedSchema),
    400: errorResponse('`name` invalid (`VALIDATION`), or invalid JSON'),
    415: errorResponse('A body that is not JSON'),
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  // Without a Content-Type zod-openapi hands over `{}` unparsed, so the default is applied here too.
  const name = (c.req.valid('json') as { name?: string }).name ?? DEFAULT_PAIRED_NAME
  const [device] = await asUser(c, (tx) =>
    tx
      .insert(devices)
      .values({ userId: c.var.user.id, name, status: 'approved', ip: c.var.services.clientIp(c), pairedAt: sql`now()` })
      .returning(),
  )
  return c.json(
    { success: true as const, device: { id: device.id, name: device.name, status: 'approved' as const, pairedAt: device.pairedAt!.toISOString() } },
    200,
  )
}
