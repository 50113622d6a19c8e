import { describe, expect, it } from 'vitest'
import type { SoulHost } from '../../support/soul-host'
import type { WorkerdPlatform } from '../../support/workerd-platform'
import { browser } from './browser'
import { signedIn, UNAUTHORIZED } from './people'

/** colony: the soul service's colony tree, soul and diagnostics, through the Worker's fetch to it. */
export function colonyJourney(p: WorkerdPlatform, soul: SoulHost) {
  describe('colony', () => {
    it('reads the colony tree, the soul and the diagnostics from the soul service; refuses the signed out', async () => {
      const alice = await signedIn(p, 'Alice')
      const tree = await alice.get('/api/colony/status')
      expect(tree.status, await tree.clone().text()).toBe(200)
      const body = (await tree.json()) as { colony_size: number; avg_fitness: number; agents: Array<{ id: string }> }
      expect(body.colony_size).toBe(3)
      expect(body.avg_fitness).toBe(57.5)
      expect(soul.seen.at(-1)).toEqual({ path: '/colony', authorization: 'Bearer soul-token' })
      const s = (await (await alice.get('/api/colony/status?action=soul')).json()) as { active: boolean; mode: string }
      expect(s).toMatchObject({ active: true, mode: 'explore' })
      const diag = (await (await alice.get('/api/colony/status?action=diagnostics')).json()) as { configured: boolean; hosts: Array<{ ok: boolean }> }
      expect(diag.configured).toBe(true)
      expect(diag.hosts[0].ok).toBe(true)

      const signedOut = await browser(p).get('/api/colony/status')
      expect(signedOut.status).toBe(401)
      expect(await signedOut.json()).toEqual(UNAUTHORIZED)
    })
  })
}
