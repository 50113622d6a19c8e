import { describe, expect, it } from 'vitest'
import { insertApiKey } from '../../auth/helpers'
import { PAYING, useHarness } from '../../support/harness'
import { post, seedPoster, text } from './helpers'

const h = useHarness({ plan: PAYING })

describe('social posts: security', () => {
  it("bob cannot post as alice's agent, by cookie or by key: 404, and nothing is counted", async () => {
    const agent = await seedPoster(h, h.users.alice)
    const { key } = await insertApiKey(h.db, h.users.bob.id)
    expect((await post(h, h.users.bob, { agentId: agent.id, content: 'mine now' })).status).toBe(404)
    expect((await post(h, undefined, { agentId: agent.id, content: 'mine now' }, { authorization: `Bearer ${key}` })).status).toBe(404)
    // Bob's attempts neither spent alice's day nor marked the text as a duplicate.
    const res = await post(h, h.users.alice, { agentId: agent.id, content: 'mine now' })
    expect(res.status).toBe(201)
    expect((await res.json()).limits.remaining).toBe(4)
  })

  it('a cookie from a foreign origin is refused (403) before anything is posted', async () => {
    const agent = await seedPoster(h, h.users.alice)
    const res = await post(h, h.users.alice, { agentId: agent.id, content: text() }, { origin: 'https://evil.example' })
    expect(res.status).toBe(403)
    expect((await res.json()).code).toBe('ORIGIN_NOT_ALLOWED')
  })
})
