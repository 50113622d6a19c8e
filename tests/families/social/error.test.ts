import { inArray } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { socialPosts } from '../../../schema'
import { insertApiKey } from '../../auth/helpers'
import { PAYING, useHarness } from '../../support/harness'
import { call } from '../../support/requests'
import { post, seedPoster, text } from './helpers'

const h = useHarness({ plan: PAYING })

describe('social posts: errors', () => {
  it('without paid access (an API key’s owner too) → 402 PLAN_REQUIRED; a suspended agent → 409; nothing posted', async () => {
    const lapsed = await h.seedUser('Lapsed', `lapsed-${crypto.randomUUID().slice(0, 8)}@example.com`, { plan: null })
    const agent = await seedPoster(h, lapsed)
    const { key } = await insertApiKey(h.db, lapsed.id)
    for (const res of [await post(h, lapsed, { agentId: agent.id, content: text() }), await post(h, undefined, { agentId: agent.id, content: text() }, { authorization: `Bearer ${key}` })]) {
      expect(res.status).toBe(402)
      expect(await res.json()).toEqual({ error: 'Paid plan required', code: 'PLAN_REQUIRED' })
    }
    const suspended = await seedPoster(h, h.users.bob, { status: 'suspended' })
    const res = await post(h, h.users.bob, { agentId: suspended.id, content: text() })
    expect(res.status).toBe(409)
    expect(await res.json()).toEqual({ error: 'Agent suspended: start it again', code: 'INVALID_TRANSITION' })
    expect(await h.db.select().from(socialPosts).where(inArray(socialPosts.agentId, [agent.id, suspended.id]))).toEqual([])
  })

  it('the sixth post of the day is 429 POST_LIMIT with retryAfterSeconds until the UTC day ends', async () => {
    const agent = await seedPoster(h, h.users.alice)
    for (let i = 0; i < 5; i++) expect((await post(h, h.users.alice, { agentId: agent.id, content: text() })).status).toBe(201)
    const res = await post(h, h.users.alice, { agentId: agent.id, content: text() })
    expect(res.status).toBe(429)
    const body = await res.json()
    expect(body).toEqual({ error: 'Daily post limit reached for this agent', code: 'POST_LIMIT', retryAfterSeconds: expect.any(Number) })
    const toMidnight = Math.ceil((86_400_000 - (Date.now() % 86_400_000)) / 1000)
    expect(body.retryAfterSeconds).toBeGreaterThan(0)
    expect(body.retryAfterSeconds).toBeLessThanOrEqual(toMidnight + 1)
    expect(res.headers.get('retry-after')).toBe(String(body.retryAfterSeconds))
    expect(res.headers.get('ratelimit-limit')).toBe('5')
    expect(res.headers.get('ratelimit-remaining')).toBe('0')
  })

  it('the same text within 10 minutes is 429 DUPLICATE_POST, whatever its case, spacing or look-alike letters', async () => {
    const agent = await seedPoster(h, h.users.alice)
    expect((await post(h, h.users.alice, { agentId: agent.id, content: 'Good morning, world' })).status).toBe(201)
    for (const again of ['good   MORNING, world', ' Good morning,\nworld ', 'Ｇｏｏｄ morning, world', 'Good mor\u200bning, world']) {
      const res = await post(h, h.users.alice, { agentId: agent.id, content: again })
      expect(res.status, again).toBe(429)
      const body = await res.json()
      expect(body).toMatchObject({ code: 'DUPLICATE_POST', error: 'The same text was posted in the last 10 minutes' })
      expect(body.retryAfterSeconds).toBeGreaterThan(590)
      expect(body.retryAfterSeconds).toBeLessThanOrEqual(600)
    }
  })

  it('a refused duplicate does not count against the day', async () => {
    const agent = await seedPoster(h, h.users.alice)
    await post(h, h.users.alice, { agentId: agent.id, content: 'same' })
    for (let i = 0; i < 3; i++) expect((await post(h, h.users.alice, { agentId: agent.id, content: 'same' })).status).toBe(429)
    const res = await post(h, h.users.alice, { agentId: agent.id, content: text() })
    expect((await res.json()).limits.remaining).toBe(3)
  })

  it('concurrent posts: 20 at once on a fresh agent give exactly 5 posts, 20 copies of one text exactly one', async () => {
    const agent = await seedPoster(h, h.users.bob)
    const many = await Promise.all(Array.from({ length: 20 }, () => post(h, h.users.bob, { agentId: agent.id, content: text() })))
    expect(many.filter((r) => r.status === 201)).toHaveLength(5)
    expect(many.filter((r) => r.status === 429)).toHaveLength(15)
    const other = await seedPoster(h, h.users.bob)
    const same = await Promise.all(Array.from({ length: 20 }, () => post(h, h.users.bob, { agentId: other.id, content: 'one text' })))
    expect(same.filter((r) => r.status === 201)).toHaveLength(1)
  })

  it('an unverified agent over 2,000 characters is 400 POST_TOO_LONG; over 10,000 is a validation error for anyone', async () => {
    const agent = await seedPoster(h, h.users.alice)
    const res = await post(h, h.users.alice, { agentId: agent.id, content: 'y'.repeat(2_001) })
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({ error: 'Unverified agents may post at most 2000 characters', code: 'POST_TOO_LONG' })
    expect((await post(h, h.users.alice, { agentId: agent.id, content: 'y'.repeat(2_000) })).status).toBe(201)
    const verified = await seedPoster(h, h.users.alice, { verification: 'human_verified' })
    const over = await post(h, h.users.alice, { agentId: verified.id, content: 'z'.repeat(10_001) })
    expect(over.status).toBe(400)
    expect((await over.json()).code).toBe('VALIDATION')
  })

  it('an agent under 24 hours old may not post links, however written; plain text passes', async () => {
    const agent = await seedPoster(h, h.users.alice, { createdAt: new Date(Date.now() - 60_000) })
    for (const content of ['see https://example.com', 'go to www.example.org', 'visit example.com/offer', 'HTTPS://EXAMPLE.COM', 'ｗｗｗ.example.net', 'exa\u200bmple.io/x', 'example [dot] com', 'http://10.0.0.1/x']) {
      const res = await post(h, h.users.alice, { agentId: agent.id, content })
      expect(res.status, content).toBe(403)
      expect(await res.json()).toEqual({ error: 'Agents under 24 hours old may not post links', code: 'URLS_NOT_ALLOWED' })
    }
    expect((await post(h, h.users.alice, { agentId: agent.id, content: 'No links here. Version 2.0 ships today.' })).status).toBe(201)
  })

  it('finding 10: any public suffix and any dot look-alike count; a day later, or without a suffix, the post goes through', async () => {
    const young = await seedPoster(h, h.users.alice, { createdAt: new Date(Date.now() - 60_000) })
    for (const content of ['deals at promo.shop', 'see service-public.fr', 'пример.рф', 'example\u3002com', 'example\uFF61fr', 'example\u30FBcom/x']) {
      const res = await post(h, h.users.alice, { agentId: young.id, content })
      expect(res.status, content).toBe(403)
      expect(await res.json()).toEqual({ error: 'Agents under 24 hours old may not post links', code: 'URLS_NOT_ALLOWED' })
    }
    expect((await post(h, h.users.alice, { agentId: young.id, content: 'Pi is 3.14, e.g. in notes.txt. Today is fine.' })).status).toBe(201)
    const grown = await seedPoster(h, h.users.alice, { createdAt: new Date(Date.now() - 25 * 3_600_000) })
    expect((await post(h, h.users.alice, { agentId: grown.id, content: 'deals at promo.shop' })).status).toBe(201)
  })

  it('missing or blank content, missing agentId, wrong types and malformed JSON are 400', async () => {
    const agent = await seedPoster(h, h.users.alice)
    for (const body of [{ agentId: agent.id }, { agentId: agent.id, content: '   ' }, { content: 'x' }, { agentId: 5, content: 'x' }, { agentId: agent.id, content: ['x'] }]) {
      const res = await post(h, h.users.alice, body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect((await res.json()).code).toBe('VALIDATION')
    }
    const bad = await post(h, h.users.alice, '{"agentId": ')
    expect(bad.status).toBe(400)
    expect(await bad.json()).toEqual({ error: 'Invalid JSON body', code: 'INVALID_JSON' })
  })

  it('an unknown agent is 404', async () => {
    const res = await post(h, h.users.alice, { agentId: 'no-such-agent', content: 'x' })
    expect(res.status).toBe(404)
    expect((await res.json()).error).toBe('Agent not found')
  })

  it('deleting an agent and creating another does not reset the day: the account’s posts are counted too (429 POST_LIMIT)', async () => {
    const carol = await h.seedUser('Carol', `carol-${crypto.randomUUID()}@example.com`)
    const first = await seedPoster(h, carol)
    for (let i = 0; i < 5; i++) expect((await post(h, carol, { agentId: first.id, content: text() })).status).toBe(201)
    expect((await call(h, 'DELETE', `/api/agents/${first.id}`, { user: carol })).status).toBe(200)
    const recreated = await seedPoster(h, carol)
    const res = await post(h, carol, { agentId: recreated.id, content: text() })
    expect(res.status).toBe(429)
    expect(await res.json()).toEqual({ error: 'Daily post limit reached for this account', code: 'POST_LIMIT', retryAfterSeconds: expect.any(Number) })
    expect(res.headers.get('ratelimit-remaining')).toBe('0')
    // The account's cap is its agents' limits together: a second agent (one more a plan allows) posts its own five.
    const second = await seedPoster(h, carol)
    for (let i = 0; i < 5; i++) expect((await post(h, carol, { agentId: second.id, content: text() })).status).toBe(201)
    expect((await post(h, carol, { agentId: recreated.id, content: text() })).status).toBe(429)
    expect((await post(h, carol, { agentId: second.id, content: text() })).status).toBe(429)
  })
})
