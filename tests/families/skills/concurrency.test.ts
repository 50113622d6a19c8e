import { eq, sql } from 'drizzle-orm'
import { afterAll, describe, expect, it } from 'vitest'
import { skillInstallations, skillRatings, skills } from '../../../schema'
import { PAYING, useHarness } from '../../support/harness'
import { call } from '../../support/requests'
import { createSkill, freshUser, install, json, liveAgent, stopRuntimes, uniqueName } from './helpers'

// On the embedded database transactions take turns; the integration project runs these on real Postgres, where
// the requests' transactions truly overlap.
const h = useHarness({ plan: PAYING })
afterAll(() => stopRuntimes())

describe('skills: concurrent requests', () => {
  it('ten creates of one name at once (cases and spaces differ): exactly one 201, the rest 400 duplicate; one row', async () => {
    const users = await Promise.all(Array.from({ length: 10 }, () => freshUser(h)))
    const base = uniqueName('Race')
    const variants = users.map((_, i) => (i % 3 === 0 ? base.toUpperCase() : i % 3 === 1 ? ` ${base.toLowerCase()}  ` : base))
    const answers = await Promise.all(users.map((u, i) => call(h, 'POST', '/api/skills', { user: u, body: { name: variants[i], description: 'd' } })))
    const statuses = answers.map((r) => r.status)
    expect(statuses.filter((s) => s === 201)).toHaveLength(1)
    expect(statuses.filter((s) => s === 400)).toHaveLength(9)
    for (const r of answers.filter((r) => r.status === 400)) {
      expect(await r.json()).toEqual({ error: 'A skill with this name already exists', code: 'SKILL_NAME_TAKEN' })
    }
    expect(await h.db.select().from(skills).where(eq(skills.nameKey, base.toLowerCase()))).toHaveLength(1)
  })

  it('twenty users rating one skill at once: exact count, sum and average', async () => {
    const owner = await freshUser(h)
    const { skill } = await createSkill(h, owner)
    const users = await Promise.all(Array.from({ length: 20 }, () => freshUser(h)))
    const ratings = users.map((_, i) => (i % 5) + 1) // four of each: average 3
    const answers = await Promise.all(users.map((u, i) => call(h, 'POST', `/api/skills/${skill.id}/rating`, { user: u, body: { rating: ratings[i] } })))
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(200))
    const counts = (await Promise.all(answers.map((r) => r.json()))).map((b) => b.ratingCount).sort((a, b) => a - b)
    // each answer saw the ratings committed before its own: 1, 2, ..., 20
    expect(counts).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
    const [row] = await h.db.select().from(skills).where(eq(skills.id, skill.id))
    expect([row.ratingSum, row.ratingCount]).toEqual([60, 20])
    const catalog = await json(call(h, 'GET', `/api/skills?search=${encodeURIComponent(skill.name)}`, { user: owner }), 200)
    expect(catalog.skills[0]).toMatchObject({ rating: 3, ratingCount: 20 })
  })

  it('users re-rating while others rate: the counters always equal the stored ratings', async () => {
    const owner = await freshUser(h)
    const { skill } = await createSkill(h, owner)
    const users = await Promise.all(Array.from({ length: 8 }, () => freshUser(h)))
    await Promise.all(
      users.flatMap((u, i) => [1, 5, (i % 5) + 1].map((rating) => call(h, 'POST', `/api/skills/${skill.id}/rating`, { user: u, body: { rating } }))),
    )
    const [row] = await h.db.select().from(skills).where(eq(skills.id, skill.id))
    const [stored] = await h.db
      .select({ sum: sql<number>`coalesce(sum(${skillRatings.rating}), 0)::int`, n: sql<number>`count(*)::int` })
      .from(skillRatings)
      .where(eq(skillRatings.skillId, skill.id))
    expect(row.ratingCount).toBe(8)
    expect([row.ratingSum, row.ratingCount]).toEqual([stored.sum, stored.n])
  })

  it('ten installs of one skill on one agent at once: all 200, one installation, one of them new', async () => {
    const u = await freshUser(h)
    const { skill } = await createSkill(h, u)
    const live = await liveAgent(h, u)
    const answers = await Promise.all(Array.from({ length: 10 }, () => install(h, u, { skillId: skill.id, agentId: live.agent.id })))
    expect(answers.map((r) => r.status)).toEqual(Array(10).fill(200))
    const bodies = await Promise.all(answers.map((r) => r.json()))
    expect(bodies.filter((b) => !b.alreadyInstalled)).toHaveLength(1)
    expect(new Set(bodies.map((b) => b.installed.id)).size).toBe(1)
    expect(await h.db.select().from(skillInstallations).where(eq(skillInstallations.agentId, live.agent.id))).toHaveLength(1)
    expect(live.synced().skills.map((s) => s.name)).toEqual([skill.name])
  })
})
