import { z } from '@hono/zod-openapi'

export const DEVICE_STATUSES = ['pending', 'approved', 'denied', 'revoked'] as const
export type DeviceStatus = (typeof DEVICE_STATUSES)[number]

export const NAME_MAX = 64

/** A device name: trimmed, 1 to 64 characters; `fallback` when absent. */
export const deviceNameField = (fallback: string) =>
  z
    .string({ error: 'Name must be a string' })
    .trim()
    .min(1, 'Name must not be empty')
    .max(NAME_MAX, `Name must be at most ${NAME_MAX} characters`)
    .default(fallback)
    .openapi({ description: `Trimmed, 1 to ${NAME_MAX} characters. Default \`${fallback}\`.`, example: fallback })

export const DeviceSchema = z
  .object({
    id: z.string().max(255),
    name: z.string().max(256),
    ip: z.string().max(1024).nullable().openapi({ description: 'Client address that registered the device' }),
    firstSeen: z.string().max(64).openapi({ format: 'date-time' }),
    lastSeen: z.string().max(64).openapi({ format: 'date-time', description: 'Updated on every state change' }),
    status: z.enum(DEVICE_STATUSES),
  })
  .openapi('Device')

export const DeviceListsSchema = z.object({ pending: z.array(DeviceSchema), approved: z.array(DeviceSchema) })
