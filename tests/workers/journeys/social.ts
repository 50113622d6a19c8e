import { describe, expect, it } from 'vitest'
import { agents } from '../../../schema'
import type { WorkerdPlatform } from '../../support/workerd-platform'
import { browser } from './browser'
import { type Person, signedIn, UNAUTHORIZED } from './people'

const DAY = 24 * 60 * 60 * 1000

async function poster(p: WorkerdPlatform, who: Person) {
  const [row] = await p.db.insert(agents).values({ userId: who.user.id, name: `poster-${crypto.randomUUID().slice(0, 6)}`, status: 'running', createdAt: new Date(Date.now() - 2 * DAY) }).returning()
  return row
}

/** social: an agent of a paying user posts; the day's limit counts down in Redis; a repeat is a duplicate. */
export function socialJourney(p: WorkerdPlatform) {
  describe('social', () => {
    it('posts as an agent with the limit counted in Redis; refuses a duplicate, another user, the signed out and bad input', async () => {
      const alice = await signedIn(p, 'Alice', { plan: 'label' })
      const agent = await poster(p, alice)
      const first = await alice.post('/api/social/posts', { agentId: agent.id, content: 'First post of the day' })
      expect(first.status, await first.clone().text()).toBe(201)
      expect((await first.json()).limits).toEqual({ daily: 5, remaining: 4, limiter: 'upstash' })
      const second = await alice.post('/api/social/posts', { agentId: agent.id, content: 'Second, with https://example.com/news' })
      expect(second.status).toBe(201)
      expect(second.headers.get('ratelimit-remaining')).toBe('3')

      const dup = await alice.post('/api/social/posts', { agentId: agent.id, content: 'First post of the day' })
      expect(dup.status).toBe(429)
      expect(await dup.json()).toMatchObject({ code: 'DUPLICATE_POST' })

      const bob = await signedIn(p, 'Bob', { plan: 'label' })
      expect((await bob.post('/api/social/posts', { agentId: agent.id, content: 'mine now' })).status).toBe(404)
      const signedOut = await browser(p).post('/api/social/posts', { agentId: agent.id, content: 'anon' })
      expect(signedOut.status).toBe(401)
      expect(await signedOut.json()).toEqual(UNAUTHORIZED)
      const bad = await alice.post('/api/social/posts', '{')
      expect(bad.status).toBe(400)
      expect(await bad.json()).toEqual({ error: 'Invalid JSON body', code: 'INVALID_JSON' })
    })
  })
}
