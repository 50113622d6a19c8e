import { describe, expect, it } from 'vitest'
import { PAYING, useFixture, useHarness } from '../../support/harness'
import { startUpstashRestServer } from '../../support/upstash-rest-server'
import { post, seedPoster, text } from './helpers'

const redisUrl = process.env.TEST_REDIS_URL
if (!redisUrl) console.warn('[social kv-rest] skipped: TEST_REDIS_URL not set')

// The limiter's own Upstash database (KV_REST_API_*), separate from the platform's store.
describe.skipIf(!redisUrl)(`social posts counted in the KV_REST_API_* database${redisUrl ? '' : ' (skipped: TEST_REDIS_URL not set)'}`, () => {
  const server = useFixture(() => startUpstashRestServer({ redisUrl: redisUrl!, db: 4 }))
  const h = useHarness(() => ({ env: { KV_REST_API_URL: server.url, KV_REST_API_TOKEN: server.token }, plan: PAYING }))

  it('uses it: limiter `kv-rest`, the daily limit and the duplicate cooldown hold there', async () => {
    const agent = await seedPoster(h, h.users.alice)
    const first = await post(h, h.users.alice, { agentId: agent.id, content: 'counted remotely' })
    expect(first.status).toBe(201)
    expect((await first.json()).limits).toEqual({ daily: 5, remaining: 4, limiter: 'kv-rest' })
    expect((await post(h, h.users.alice, { agentId: agent.id, content: 'Counted  remotely' })).status).toBe(429)
    for (let i = 0; i < 4; i++) expect((await post(h, h.users.alice, { agentId: agent.id, content: text() })).status).toBe(201)
    expect((await (await post(h, h.users.alice, { agentId: agent.id, content: text() })).json()).code).toBe('POST_LIMIT')
  })
})
