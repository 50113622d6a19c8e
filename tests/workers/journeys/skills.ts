import { describe, expect, it } from 'vitest'
import { agents } from '../../../schema'
import type { WorkerdPlatform } from '../../support/workerd-platform'
import { browser } from './browser'
import { admin, signedIn, UNAUTHORIZED } from './people'

const CLEAN_CODE = "export async function run(q) {\n  const res = await fetch('https://api.example.com/search?q=' + encodeURIComponent(q))\n  return res.json()\n}"

/** skills: the catalog, a scanned skill created, verified by an admin, installed on an agent, downloaded and rated. */
export function skillsJourney(p: WorkerdPlatform) {
  describe('skills', () => {
    it('lists, creates, verifies, installs, downloads and rates a skill; refuses the signed out, another user, bad input, and installs once', async () => {
      const catalog = await browser(p).get('/api/skills')
      expect(catalog.status).toBe(200)
      expect(((await catalog.json()) as { skills: unknown[] }).skills.length).toBeGreaterThan(0)

      const alice = await signedIn(p, 'Alice', { plan: 'label' })
      const name = `Weather ${crypto.randomUUID().slice(0, 8)}`
      const created = await alice.post('/api/skills', { name, description: 'Tells the weather', code: CLEAN_CODE })
      expect(created.status, await created.clone().text()).toBe(201)
      const { skill } = (await created.json()) as { skill: { id: string; scan: { trustTier: string } } }
      expect(skill.scan.trustTier).toBe('review')
      const verified = await (await admin(p)).post('/api/skills/verify', { skillId: skill.id })
      expect(verified.status, await verified.clone().text()).toBe(200)
      expect(await verified.json()).toMatchObject({ scan: { trustTier: 'verified', installAllowed: true } })

      const [agent] = await p.db.insert(agents).values({ userId: alice.user.id, name: 'skills-agent', plan: 'solo', status: 'running' }).returning()
      const install = await alice.post('/api/skills/install', { skillId: skill.id, agentId: agent.id })
      expect(install.status, await install.clone().text()).toBe(200)
      expect(await install.json()).toMatchObject({ success: true, deployed: false })
      // Installing it again: nothing new.
      expect(await (await alice.post('/api/skills/install', { skillId: skill.id, agentId: agent.id })).json()).toMatchObject({ alreadyInstalled: true })
      const mine = (await (await alice.get(`/api/skills?agentId=${agent.id}`)).json()) as { installedSkillIds: string[] }
      expect(mine.installedSkillIds).toContain(skill.id)
      const download = await alice.get(`/api/skills/${skill.id}/download`)
      expect(download.status).toBe(200)
      expect(download.headers.get('content-disposition')).toMatch(/^attachment; filename=weather-.*\.service-skill\.json$/)
      expect(await (await alice.post(`/api/skills/${skill.id}/rating`, { rating: 5 })).json()).toEqual({ success: true, skillId: skill.id, userRating: 5, rating: 5, ratingCount: 1 })
      expect(await (await alice.post('/api/skills/uninstall', { skillId: skill.id, agentId: agent.id })).json()).toMatchObject({ success: true })

      const bob = await signedIn(p, 'Bob', { plan: 'label' })
      const theirs = await bob.post('/api/skills/install', { skillId: skill.id, agentId: agent.id })
      expect(theirs.status).toBe(404)
      expect(await theirs.json()).toEqual({ error: 'Agent not found', code: 'NOT_FOUND' })
      expect((await alice.post('/api/skills/verify', { skillId: skill.id })).status).toBe(403)
      const signedOut = await browser(p).post('/api/skills', { name: 'x', description: 'y', code: CLEAN_CODE })
      expect(signedOut.status).toBe(401)
      expect(await signedOut.json()).toEqual(UNAUTHORIZED)
      const bad = await alice.post(`/api/skills/${skill.id}/rating`, { rating: 7 })
      expect(bad.status).toBe(400)
      expect(await bad.json()).toMatchObject({ code: 'VALIDATION' })
    })
  })
}
