import { describe, expect, it } from 'vitest'
import type { WorkerdPlatform } from '../../support/workerd-platform'
import { admin, signedIn, UNAUTHORIZED } from './people'

/** health: the public probe, the version, the admin view (admin only), the dashboard's, the backend's. */
export function healthJourney(p: WorkerdPlatform) {
  describe('health', () => {
    it('answers the probe, the version, the dashboard and the admin view; refuses the signed out and non-admins', async () => {
      const health = await p.fetch('/api/health')
      expect(health.status).toBe(200)
      const body = (await health.json()) as { status: string; health: string; timestamp: string }
      expect(body.status).toBe('ok')
      expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp)
      expect(await (await p.fetch('/api/version')).json()).toEqual({ version: 'v0.0.0-workerd' })
      expect((await p.fetch('/api/dashboard/health')).status).toBe(200)

      const boss = await admin(p)
      const view = await boss.get('/api/admin/health')
      expect(view.status, await view.clone().text()).toBe(200)
      const metrics = (await view.json()) as { cpu: unknown; memory: unknown; uptime: unknown; adapters: { db: string } }
      expect(metrics.adapters.db).toMatch(/neon|postgres/)
      expect(metrics.uptime).toBeNull() // no process uptime on workerd, as documented
      // A second admin request in the same isolate: nothing kept from the first breaks it.
      expect((await boss.get('/api/admin/health')).status).toBe(200)

      const signedOut = await p.fetch('/api/admin/health')
      expect(signedOut.status).toBe(401)
      expect(await signedOut.json()).toEqual(UNAUTHORIZED)
      const notAdmin = await (await signedIn(p, 'Plain')).get('/api/admin/health')
      expect(notAdmin.status).toBe(403)
      expect(await notAdmin.json()).toEqual({ error: expect.any(String), code: 'ADMIN_REQUIRED' })

      const backend = await p.fetch('/health', { origin: 'backend' })
      expect(backend.status).toBe(200)
      expect(await backend.json()).toMatchObject({ status: 'ok' })
    })
  })
}
