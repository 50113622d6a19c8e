import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { startRuntime } from '../../../infra/runtime/runtime'
import { StateFile } from '../../../infra/runtime/state'
import { newGatewayToken } from '../../../lib/agents/access'
import { parseConfig } from '../../../lib/config'
import { agents } from '../../../schema'
import { SECRETS, type WorkerdPlatform } from '../../support/workerd-platform'
import { browser } from './browser'
import { admin, type Person, signedIn, UNAUTHORIZED } from './people'

const CLEAN_CODE = "export async function run(q) {\n  const res = await fetch('https://api.example.com/search?q=' + encodeURIComponent(q))\n  return res.json()\n}"

/** An agent of `who` whose runtime is the real local runtime program (as Railway would run it), with a gateway token sealed by the Workers' keys. */
async function withLiveAgent(p: WorkerdPlatform, who: Person, fn: (agentId: string, synced: () => ReturnType<StateFile['read']>) => Promise<void>) {
  const sealed = await newGatewayToken(parseConfig({ ...SECRETS, APP_ORIGIN: p.origins.app }), who.user.id)
  const dir = mkdtempSync(join(tmpdir(), 'workerd-skills-runtime-'))
  const rt = await startRuntime({ host: '127.0.0.1', port: 0, agentId: 'a', gatewayToken: sealed.token, dataDir: dir, version: '1.0.0', image: null, readyDelayMs: 0 }, () => {})
  try {
    const [agent] = await p.db
      .insert(agents)
      .values({ userId: who.user.id, name: 'skills-agent', plan: 'solo', status: 'running', runtimeUrl: `http://127.0.0.1:${rt.port}`, gatewayToken: sealed.gatewayToken, gatewayTokenKeyId: sealed.gatewayTokenKeyId })
      .returning()
    await fn(agent.id, () => new StateFile(dir).read())
  } finally {
    await rt.stop().catch(() => {})
    rmSync(dir, { recursive: true, force: true })
  }
}

/** skills: the catalog, a scanned skill created, verified by an admin, installed on an agent's runtime, downloaded and rated. */
export function skillsJourney(p: WorkerdPlatform) {
  describe('skills', () => {
    it('lists, creates, verifies, installs on a live runtime, downloads and rates a skill; refuses the signed out, another user, bad input, and installs once', async () => {
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

      await withLiveAgent(p, alice, async (agentId, synced) => {
        const install = await alice.post('/api/skills/install', { skillId: skill.id, agentId })
        expect(install.status, await install.clone().text()).toBe(200)
        expect(await install.json()).toMatchObject({ success: true, deployed: true, runtimeHydrated: true })
        // The runtime received the skill's manifest from the Worker.
        expect(synced().skills).toMatchObject([{ name, manifest: { schema: 'service.skill.v1', skill: { id: skill.id, code: CLEAN_CODE } } }])
        // Installing it again: nothing new.
        expect(await (await alice.post('/api/skills/install', { skillId: skill.id, agentId })).json()).toMatchObject({ alreadyInstalled: true })
        const mine = (await (await alice.get(`/api/skills?agentId=${agentId}`)).json()) as { installedSkillIds: string[] }
        expect(mine.installedSkillIds).toContain(skill.id)
        const download = await alice.get(`/api/skills/${skill.id}/download`)
        expect(download.status).toBe(200)
        expect(download.headers.get('content-disposition')).toMatch(/^attachment; filename=weather-.*\.service-skill\.json$/)
        expect(await (await alice.post(`/api/skills/${skill.id}/rating`, { rating: 5 })).json()).toEqual({ success: true, skillId: skill.id, userRating: 5, rating: 5, ratingCount: 1 })

        const bob = await signedIn(p, 'Bob', { plan: 'label' })
        const theirs = await bob.post('/api/skills/install', { skillId: skill.id, agentId })
        expect(theirs.status).toBe(404)
        expect(await theirs.json()).toEqual({ error: 'Agent not found', code: 'NOT_FOUND' })
        expect(await (await alice.post('/api/skills/uninstall', { skillId: skill.id, agentId })).json()).toMatchObject({ success: true })
        expect(synced().skills).toEqual([])
      })

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
