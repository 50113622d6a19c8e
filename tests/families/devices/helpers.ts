import { eq } from 'drizzle-orm'
import { expect } from 'vitest'
import { devices } from '../../../schema'
import { webClient } from '../../support/client'
import type { Harness, SeededUser } from '../../support/harness'
import { call } from '../../support/requests'

export interface DeviceItem {
  id: string
  name: string
  ip: string | null
  firstSeen: string
  lastSeen: string
  status: 'pending' | 'approved' | 'denied' | 'revoked'
}
export interface Lists {
  pending: DeviceItem[]
  approved: DeviceItem[]
}
export interface Registered {
  success: true
  deviceId: string
  pairingCode: string
  pairingUrl: string
}

export async function register(h: Harness, user: SeededUser, name?: string, headers?: Record<string, string>): Promise<Registered> {
  const res = await webClient(h, user, headers).api.devices.$put({ query: name === undefined ? {} : { name } })
  expect(res.status).toBe(200)
  return (await res.json()) as Registered
}

export async function pair(h: Harness, user: SeededUser, body?: unknown) {
  const res = await call(h, 'POST', '/api/devices/pair', { user, body })
  expect(res.status).toBe(200)
  return ((await res.json()) as { device: { id: string; name: string; status: string; pairedAt: string } }).device
}

export const act = (h: Harness, user: SeededUser, deviceId: string, action: string) =>
  call(h, 'POST', '/api/devices', { user, body: { deviceId, action } })

export async function lists(h: Harness, user: SeededUser): Promise<Lists> {
  const res = await webClient(h, user).api.devices.$get()
  expect(res.status).toBe(200)
  return (await res.json()) as Lists
}

/** A device of `user` in `status`, reached through the API the way a real one would be. */
export async function deviceIn(h: Harness, user: SeededUser, status: DeviceItem['status']) {
  const { deviceId } = await register(h, user, `in ${status}`)
  const steps = { pending: [], approved: ['approve'], denied: ['deny'], revoked: ['approve', 'revoke'] }[status]
  for (const action of steps) expect((await act(h, user, deviceId, action)).status).toBe(200)
  return deviceId
}

export async function row(h: Harness, id: string) {
  const [r] = await h.db.select().from(devices).where(eq(devices.id, id))
  return r
}
