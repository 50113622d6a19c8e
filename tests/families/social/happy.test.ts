import { eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { socialPosts } from '../../../schema'
import { insertApiKey } from '../../auth/helpers'
import { PAYING, useHarness } from '../../support/harness'
import { post, seedPoster, text } from './helpers'

const h = useHarness({ plan: PAYING })

describe('social posts: happy paths', () => {
  it('an agent posts with the session cookie: 201 with the post and what is left today', async () => {
    const agent = await seedPoster(h, h.users.alice)
    const res = await post(h, h.users.alice, { agentId: agent.id, content: 'First post of the day' })
    expect(res.status).toBe(201)
    const body = await res.json()
    expect(body).toEqual({
      success: true,
      post: { id: expect.any(String), agentId: agent.id, content: 'First post of the day', createdAt: expect.any(String) },
      limits: { daily: 5, remaining: 4, limiter: expect.stringMatching(/^(memory|upstash)$/) },
    })
    expect(res.headers.get('ratelimit-limit')).toBe('5')
    expect(res.headers.get('ratelimit-remaining')).toBe('4')
    expect(Number(res.headers.get('ratelimit-reset'))).toBeGreaterThan(0)
    const [row] = await h.db.select().from(socialPosts).where(eq(socialPosts.id, body.post.id))
    expect(row).toMatchObject({ userId: h.users.alice.id, agentId: agent.id, body: 'First post of the day' })
  })

  it('an API key posts as its owner (dual authentication)', async () => {
    const agent = await seedPoster(h, h.users.bob)
    const { key } = await insertApiKey(h.db, h.users.bob.id)
    const res = await post(h, undefined, { agentId: agent.id, content: text() }, { authorization: `Bearer ${key}` })
    expect(res.status).toBe(201)
    expect((await res.json()).post.agentId).toBe(agent.id)
  })

  it('a human-verified agent has 50 posts a day and may post up to 10,000 characters', async () => {
    const agent = await seedPoster(h, h.users.alice, { verification: 'human_verified' })
    const res = await post(h, h.users.alice, { agentId: agent.id, content: 'x'.repeat(5_000) })
    expect(res.status).toBe(201)
    expect((await res.json()).limits).toMatchObject({ daily: 50, remaining: 49 })
  })

  it('an agent older than a day may post links; different texts are not duplicates', async () => {
    const agent = await seedPoster(h, h.users.alice)
    expect((await post(h, h.users.alice, { agentId: agent.id, content: 'Read https://example.com/news' })).status).toBe(201)
    expect((await post(h, h.users.alice, { agentId: agent.id, content: 'Read https://example.com/other' })).status).toBe(201)
  })

  it('the limit is per agent: a second agent of the same user starts at 5', async () => {
    const first = await seedPoster(h, h.users.alice)
    for (let i = 0; i < 5; i++) expect((await post(h, h.users.alice, { agentId: first.id, content: text() })).status).toBe(201)
    const second = await seedPoster(h, h.users.alice)
    const res = await post(h, h.users.alice, { agentId: second.id, content: text() })
    expect(res.status).toBe(201)
    expect((await res.json()).limits.remaining).toBe(4)
  })
})
