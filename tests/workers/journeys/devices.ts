import { describe, expect, it } from 'vitest'
import type { WorkerdPlatform } from '../../support/workerd-platform'
import { browser } from './browser'
import { signedIn, UNAUTHORIZED } from './people'

type Lists = { pending: Array<{ id: string }>; approved: Array<{ id: string }> }

/** devices: register a device, pair one, approve, list, revoke; another user's device is not found. */
export function devicesJourney(p: WorkerdPlatform) {
  describe('devices', () => {
    it('registers, pairs, approves, lists and revokes devices; refuses the signed out, another user and bad input', async () => {
      const alice = await signedIn(p, 'Alice')
      const reg = await alice.call('PUT', '/api/devices?name=Laptop')
      expect(reg.status, await reg.clone().text()).toBe(200)
      const { deviceId, pairingCode } = (await reg.json()) as { deviceId: string; pairingCode: string }
      expect(pairingCode).toMatch(/^[A-Z0-9]{6}$/)
      const paired = await alice.post('/api/devices/pair', { name: 'Phone' })
      expect(paired.status).toBe(200)
      const { device } = (await paired.json()) as { device: { id: string; status: string } }
      expect(device.status).toBe('approved')

      const approve = await alice.post('/api/devices', { deviceId, action: 'approve' })
      expect(approve.status).toBe(200)
      const lists = (await (await alice.get('/api/devices')).json()) as Lists
      expect(lists.pending).toEqual([])
      expect(lists.approved.map((d) => d.id).sort()).toEqual([deviceId, device.id].sort())
      expect((await alice.post('/api/devices', { deviceId: device.id, action: 'revoke' })).status).toBe(200)

      // A state change applied twice: the second is refused.
      const twice = await alice.post('/api/devices', { deviceId, action: 'approve' })
      expect(twice.status).toBe(400)
      expect(await twice.json()).toMatchObject({ code: 'INVALID_DEVICE_STATE' })

      const bob = await signedIn(p, 'Bob')
      const theirs = await bob.post('/api/devices', { deviceId, action: 'revoke' })
      expect(theirs.status).toBe(404)
      expect(await theirs.json()).toEqual({ error: 'Device not found', code: 'NOT_FOUND' })
      expect(await (await bob.get('/api/devices')).json()).toEqual({ pending: [], approved: [] })

      const signedOut = await browser(p).get('/api/devices')
      expect(signedOut.status).toBe(401)
      expect(await signedOut.json()).toEqual(UNAUTHORIZED)
      const bad = await alice.post('/api/devices', { deviceId, action: 'explode' })
      expect(bad.status).toBe(400)
      expect(await bad.json()).toMatchObject({ error: 'Invalid action', code: 'VALIDATION' })
    })
  })
}
