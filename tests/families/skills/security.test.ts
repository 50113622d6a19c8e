import { eq } from 'drizzle-orm'
import { afterAll, describe, expect, it } from 'vitest'
import { SESSION_COOKIE } from '../../../lib/auth/session'
import { skillInstallations, skillRatings, skills } from '../../../schema'
import { BROWSER, PAYING, useHarness } from '../../support/harness'
import { call, FORBIDDEN_ORIGIN } from '../../support/requests'
import { seedAgent } from '../instance/helpers'
import { CLEAN_CODE, createSkill, freshUser, insertSkill, install, json, liveAgent, stopRuntimes, uninstall, uniqueName } from './helpers'

const h = useHarness({ plan: PAYING })
afterAll(() => stopRuntimes())

const UNAUTHORIZED = { error: 'Unauthorized', code: 'UNAUTHORIZED' }

/** Every session route of the family, as a request with a valid body. */
const sessionRoutes = (skillId: string, agentId: string) => [
  { method: 'POST', path: '/api/skills', body: { name: uniqueName(), description: 'd' } },
  { method: 'POST', path: '/api/skills/install', body: { skillId, agentId } },
  { method: 'POST', path: '/api/skills/uninstall', body: { skillId, agentId } },
  { method: 'GET', path: `/api/skills/${skillId}/download` },
  { method: 'POST', path: `/api/skills/${skillId}/rating`, body: { rating: 5 } },
]

describe('skills: authentication', () => {
  it('no session, a forged or expired-looking cookie → 401 on every session route; nothing changes', async () => {
    const u = await freshUser(h)
    const { skill } = await createSkill(h, u)
    const agent = await seedAgent(h, u)
    for (const cookie of [undefined, `${SESSION_COOKIE}=${'f'.repeat(64)}`, `${SESSION_COOKIE}=${u.token}x`, `${SESSION_COOKIE}=${'a'.repeat(300)}`]) {
      for (const r of sessionRoutes(skill.id, agent.id)) {
        const res = await call(h, r.method, r.path, { body: r.body, headers: cookie ? { cookie } : {} })
        expect(await json(res, 401), `${r.method} ${r.path}`).toEqual(UNAUTHORIZED)
      }
    }
    const [row] = await h.db.select().from(skills).where(eq(skills.id, skill.id))
    expect([row.downloads, row.ratingCount]).toEqual([0, 0])
    expect(await h.db.select().from(skillInstallations).where(eq(skillInstallations.agentId, agent.id))).toEqual([])
  })

  it('a signed-in write from a foreign Origin → 403 ORIGIN_NOT_ALLOWED', async () => {
    const u = await freshUser(h)
    const { skill } = await createSkill(h, u)
    const agent = await seedAgent(h, u)
    for (const r of sessionRoutes(skill.id, agent.id).filter((r) => r.method === 'POST')) {
      const res = await call(h, r.method, r.path, { user: u, body: r.body, headers: { origin: 'https://evil.example' } })
      expect(await json(res, 403), r.path).toEqual(FORBIDDEN_ORIGIN)
    }
  })

  it('the catalog and verify answer without a session; a broken cookie on the catalog reads as anonymous', async () => {
    expect((await h.web.request('/api/skills', { headers: { cookie: `${SESSION_COOKIE}=forged` } })).status).toBe(200)
    const res = await h.web.request('/api/skills/verify', { method: 'POST', headers: { 'content-type': 'application/json', ...BROWSER }, body: JSON.stringify({ name: 'n' }) })
    expect(res.status).toBe(200)
  })
})

describe('skills: only an admin’s review makes a skill verified', () => {
  it('without a session, with a forged cookie, or as its author (not an admin) → 401/403; the stored scan is unchanged', async () => {
    const author = await freshUser(h, 'Author')
    const { skill } = await createSkill(h, author)
    const [before] = await h.db.select().from(skills).where(eq(skills.id, skill.id))
    for (const headers of [{}, { cookie: `${SESSION_COOKIE}=${'f'.repeat(64)}` }] as Record<string, string>[]) {
      const res = await call(h, 'POST', '/api/skills/verify', { body: { skillId: skill.id }, headers })
      expect(await json(res, 401)).toEqual(UNAUTHORIZED)
    }
    for (const user of [author, h.users.alice]) {
      const res = await call(h, 'POST', '/api/skills/verify', { user, body: { skillId: skill.id, name: skill.name, sourceUrl: 'https://github.com/acme/skills' } })
      expect(await json(res, 403)).toEqual({ error: 'Admin access required', code: 'ADMIN_REQUIRED' })
    }
    const [after] = await h.db.select().from(skills).where(eq(skills.id, skill.id))
    expect(after.scan).toEqual(before.scan)
    expect(after.scan.trustTier).toBe('review')
  })

  it('an admin’s review from a foreign Origin → 403 ORIGIN_NOT_ALLOWED; nothing changes', async () => {
    const { skill } = await createSkill(h, await freshUser(h))
    const res = await call(h, 'POST', '/api/skills/verify', { user: h.users.admin, body: { skillId: skill.id }, headers: { origin: 'https://evil.example' } })
    expect(await json(res, 403)).toEqual(FORBIDDEN_ORIGIN)
    const [row] = await h.db.select().from(skills).where(eq(skills.id, skill.id))
    expect(row.scan.trustTier).toBe('review')
  })

  it('the author cannot write verified into the stored scan through create (scan, reviewedBy in the body are ignored)', async () => {
    const u = await freshUser(h, 'Mallory')
    const res = await call(h, 'POST', '/api/skills', {
      user: u,
      body: { name: uniqueName(), description: 'd', code: CLEAN_CODE, scan: { trustTier: 'verified', reviewedBy: h.users.admin.id }, reviewedBy: h.users.admin.id },
    })
    const { skill } = await json(res, 201)
    const [row] = await h.db.select().from(skills).where(eq(skills.id, skill.id))
    expect(row.scan.trustTier).toBe('review')
    expect(row.scan.reviewedBy).toBeUndefined()
  })
})

describe('skills: another user’s things', () => {
  it('installing on or uninstalling from another user’s agent (by id, service id or instance id) → 404, nothing changes', async () => {
    const [alice, bob] = [await freshUser(h, 'Alice'), await freshUser(h, 'Bob')]
    const { skill } = await createSkill(h, alice)
    const aliceAgent = await seedAgent(h, alice, { runtimeServiceId: `svc-${crypto.randomUUID()}` })
    await json(install(h, alice, { skillId: skill.id, agentId: aliceAgent.id }), 200)
    for (const agentId of [aliceAgent.id, aliceAgent.runtimeServiceId!, alice.id]) {
      expect(await json(install(h, bob, { skillId: skill.id, agentId }), 404), agentId).toEqual({ error: 'Agent not found', code: 'NOT_FOUND' })
      expect(await json(uninstall(h, bob, { skillId: skill.id, agentId }), 404), agentId).toEqual({ error: 'Agent not found', code: 'NOT_FOUND' })
    }
    const rows = await h.db.select().from(skillInstallations).where(eq(skillInstallations.agentId, aliceAgent.id))
    expect(rows).toHaveLength(1)
    expect(rows[0].userId).toBe(alice.id)
  })

  it('another user’s agent in the catalog’s agentId lists nothing', async () => {
    const [alice, bob] = [await freshUser(h, 'Alice'), await freshUser(h, 'Bob')]
    const { skill } = await createSkill(h, alice)
    const agent = await seedAgent(h, alice)
    await json(install(h, alice, { skillId: skill.id, agentId: agent.id }), 200)
    for (const agentId of [agent.id, alice.id]) {
      const body = await json(call(h, 'GET', `/api/skills?agentId=${agentId}`, { user: bob }), 200)
      expect(body.installedSkillIds).toEqual([])
    }
  })

  it('ratings are per user: bob’s rating never replaces alice’s, and each sees only their own userRating', async () => {
    const [alice, bob] = [await freshUser(h, 'Alice'), await freshUser(h, 'Bob')]
    const { skill } = await createSkill(h, alice)
    await json(call(h, 'POST', `/api/skills/${skill.id}/rating`, { user: alice, body: { rating: 5 } }), 200)
    expect(await json(call(h, 'POST', `/api/skills/${skill.id}/rating`, { user: bob, body: { rating: 1 } }), 200)).toMatchObject({ rating: 3, ratingCount: 2 })
    const mine = async (u: typeof alice) => (await json(call(h, 'GET', `/api/skills?search=${encodeURIComponent(skill.name)}`, { user: u }), 200)).skills[0].userRating
    expect([await mine(alice), await mine(bob)]).toEqual([5, 1])
    const rows = await h.db.select().from(skillRatings).where(eq(skillRatings.skillId, skill.id))
    expect(rows.map((r) => [r.userId, r.rating]).sort()).toEqual([[alice.id, 5], [bob.id, 1]].sort())
  })

  it('a runtime is only ever sent its own agent’s skills', async () => {
    const [alice, bob] = [await freshUser(h, 'Alice'), await freshUser(h, 'Bob')]
    const [a, b] = [(await createSkill(h, alice)).skill, (await createSkill(h, bob)).skill]
    const [liveA, liveB] = [await liveAgent(h, alice), await liveAgent(h, bob)]
    await json(install(h, alice, { skillId: a.id, agentId: liveA.agent.id }), 200)
    await json(install(h, bob, { skillId: b.id, agentId: liveB.agent.id }), 200)
    expect(liveA.synced().skills.map((s) => s.name)).toEqual([a.name])
    expect(liveB.synced().skills.map((s) => s.name)).toEqual([b.name])
  })
})

describe('skills: what a caller cannot set', () => {
  it('create ignores featured, counters, author, scan and ids in the body: the caller is the author, the scan is the server’s', async () => {
    const u = await freshUser(h, 'Mallory')
    const res = await call(h, 'POST', '/api/skills', {
      user: u,
      body: {
        name: uniqueName(),
        description: 'd',
        code: CLEAN_CODE,
        featured: true,
        downloads: 999,
        rating: 5,
        author: 'Platform',
        authorUserId: 'someone-else',
        id: 'platform-web-search',
        mcpEnabled: true,
        scan: { trustTier: 'trusted', installAllowed: true },
      },
    })
    const { skill, scan } = await json(res, 201)
    expect(skill).toMatchObject({ featured: false, downloads: 0, rating: 0, author: 'Mallory', mcpEnabled: false })
    expect(skill.id).not.toBe('platform-web-search')
    expect(scan.trustTier).toBe('review')
    const [row] = await h.db.select().from(skills).where(eq(skills.id, skill.id))
    expect(row.authorUserId).toBe(u.id)
  })

  it('an https sourceUrl on a public host does not make a skill verified either (finding 8), on verify and on create', async () => {
    const res = await h.web.request('/api/skills/verify', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'n', code: CLEAN_CODE, sourceUrl: 'https://github.com/acme/skills' }) })
    expect((await json(res, 200)).scan).toEqual({ trustTier: 'review', riskLevel: 'low', installAllowed: true, reasons: [], warnings: [], requiresManualReview: false })
    const { skill } = await createSkill(h, await freshUser(h), { sourceUrl: 'https://github.com/acme/skills' })
    expect(skill.scan.trustTier).toBe('review')
  })

  it('a stored scan that says verified without an admin’s review (made before reviews existed) is shown as review', async () => {
    const legacy = await insertSkill(h, { scan: { trustTier: 'verified', riskLevel: 'low', installAllowed: true, reasons: [], warnings: [], requiresManualReview: false } })
    const listed = await json(h.web.request(`/api/skills?search=${encodeURIComponent(legacy.name)}`), 200)
    expect(listed.skills[0].scan).toEqual({ trustTier: 'review', riskLevel: 'low', installAllowed: true, reasons: [], warnings: [], requiresManualReview: false })
  })

  it('no submitted code is ever trusted, whatever sourceUrl: non-https, raw IP, localhost, credentials are not verified', async () => {
    for (const sourceUrl of ['http://github.com/a/b', 'https://192.168.1.10/x', 'https://[::1]/x', 'https://localhost/x', 'https://user:pw@github.com/a', 'ftp://github.com/a']) {
      const res = await h.web.request('/api/skills/verify', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'n', code: CLEAN_CODE, sourceUrl, author: 'Platform', featured: true }) })
      const { scan } = await json(res, 200)
      expect(scan.trustTier, sourceUrl).toBe('review')
      expect(scan.warnings.length, sourceUrl).toBeGreaterThan(0)
    }
  })

  it('a hostile name is stored and served as data; the download file name carries only the slug', async () => {
    const u = await freshUser(h)
    const name = `"; rm -rf / <script>${crypto.randomUUID().slice(0, 6)}`
    const { skill } = await createSkill(h, u, { name, code: CLEAN_CODE })
    const res = await call(h, 'GET', `/api/skills/${skill.id}/download`, { user: u })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename=rm-rf-script-[a-z0-9-]+\.service-skill\.json$/)
    expect((await res.json()).skill.name).toBe(name)
  })
})
