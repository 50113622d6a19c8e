import { and, desc, eq, inArray } from 'drizzle-orm'
import type { Db } from '../../lib/db/rls'
import { type Device, devices } from '../../schema'
import type { DeviceStatus } from './schemas'

/** A device as its owner sees it (`DeviceSchema`). */
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
