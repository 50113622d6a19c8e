import { z } from '@hono/zod-openapi'
import { and, desc, eq, inArray } from 'drizzle-orm'
import type { Db } from '../../lib/db/client'
import { ApiError } from '../../lib/http/errors'
import { type Device, devices } from '../../schema'

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

export const toDevice = (d: Device) => ({
  id: d.id,
  name: d.name,
  ip: d.ip,
  firstSeen: d.firstSeen.toISOString(),
  lastSeen: d.lastSeen.toISOString(),
  status: d.status as DeviceStatus,
})

/** The caller's pending and approved devices, newest first; denied and revoked ones are not listed. */
export async function deviceLists(tx: Db, userId: string) {
  const rows = await tx
    .select()
    .from(devices)
    .where(and(eq(devices.userId, userId), inArray(devices.status, ['pending', 'approved'])))
    .orderBy(desc(devices.firstSeen), desc(devices.id))
  const list = (status: DeviceStatus) => rows.filter((d) => d.status === status).map(toDevice)
  return { pending: list('pending'), approved: list('approved') }
}

// Someone else's device answers exactly like an unknown one, so ids reveal nothing.
export const deviceNotFound = () => new ApiError(404, 'Device not found', { code: 'NOT_FOUND' })
