import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Services } from '../../lib/context'
import { MemoryKv } from '../../lib/kv/memory'
import type { Kv } from '../../lib/kv/types'
import { UpstashKv } from '../../lib/kv/upstash'
import { checkPost, socialLimiter } from '../../functions/social/limiter'
import { containsUrl, normalisePost, postFingerprint } from '../../functions/social/text'
import { startUpstashRestServer, type UpstashRestServer } from '../support/upstash-rest-server'

const redisUrl = process.env.TEST_REDIS_URL
let server: UpstashRestServer | undefined
beforeAll(async () => {
  if (redisUrl) server = await startUpstashRestServer({ redisUrl, db: 3 })
})
afterAll(() => server?.close())

const adapters: Array<[string, () => Kv]> = [['in process', () => new MemoryKv()]]
if (redisUrl) adapters.push(['Upstash REST → Redis', () => new UpstashKv(server!.url, server!.token, { timeoutMs: 15_000 })])
else console.warn('[social limiter] the Upstash case is skipped: TEST_REDIS_URL not set')

describe.each(adapters)('the social post check on %s', (_name, make) => {
  /** An agent of a fresh user, whose account cap stays out of the way unless a test sets it. */
  const poster = () => ({ agentId: `agent-${randomUUID()}`, userId: `user-${randomUUID()}` })
  const only = (agent: number) => ({ agent, account: 1000 })

  it('counts 5 a day, refuses the 6th until the UTC day ends, and undo gives a post back', async () => {
    const kv = make()
    const agent = poster()
    const now = Date.UTC(2026, 10, 24, 23, 0, 0) // an hour before midnight UTC
    const passed = []
    for (let i = 0; i < 5; i++) passed.push(await checkPost(kv, agent, `f${i}`, only(5), now))
    expect(passed.map((p) => p.ok && p.postsToday)).toEqual([1, 2, 3, 4, 5])
    expect(passed.map((p) => p.ok && p.accountPostsToday)).toEqual([1, 2, 3, 4, 5])
    const sixth = await checkPost(kv, agent, 'f5', only(5), now)
    expect(sixth).toEqual({ ok: false, reason: 'daily', retryAfterSeconds: expect.any(Number), postsToday: 5, accountPostsToday: 5, resetSeconds: 3600 })
    if (!sixth.ok) expect(sixth.retryAfterSeconds).toBeLessThanOrEqual(3600)
    const last = passed[4]
    if (last.ok) await last.undo()
    const again = await checkPost(kv, agent, 'f4', only(5), now) // the fingerprint was released too
    expect(again.ok && [again.postsToday, again.accountPostsToday]).toEqual([5, 5]) // both counts were given back
  })

  it('a fingerprint is refused for 10 minutes and spends nothing', async () => {
    const kv = make()
    const agent = poster()
    expect((await checkPost(kv, agent, 'same', only(5))).ok).toBe(true)
    const again = await checkPost(kv, agent, 'same', only(5))
    expect(again).toMatchObject({ ok: false, reason: 'duplicate' })
    if (!again.ok) expect(again.retryAfterSeconds).toBeGreaterThan(595)
    const next = await checkPost(kv, agent, 'other', only(5))
    expect(next.ok && [next.postsToday, next.accountPostsToday]).toEqual([2, 2])
  })

  it('100 concurrent checks of distinct texts pass exactly the daily limit', async () => {
    const kv = make()
    const agent = poster()
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => checkPost(kv, agent, `t${i}`, only(50))))
    expect(results.filter((r) => r.ok)).toHaveLength(50)
  })

  it('the account is counted across its agents: a new agent of the same user (a recreated one) starts at 0, the account does not', async () => {
    const kv = make()
    const userId = `user-${randomUUID()}`
    const now = Date.UTC(2026, 10, 24, 12, 0, 0)
    const first = { agentId: `agent-${randomUUID()}`, userId }
    for (let i = 0; i < 5; i++) expect((await checkPost(kv, first, `a${i}`, { agent: 5, account: 5 }, now)).ok).toBe(true)
    // The agent is deleted and another made: its own count is fresh, the account's is spent.
    const recreated = { agentId: `agent-${randomUUID()}`, userId }
    const refused = await checkPost(kv, recreated, 'b0', { agent: 5, account: 5 }, now)
    expect(refused).toEqual({ ok: false, reason: 'account', retryAfterSeconds: expect.any(Number), postsToday: 0, accountPostsToday: 5, resetSeconds: 12 * 3600 })
    if (!refused.ok) expect(refused.retryAfterSeconds).toBeLessThanOrEqual(12 * 3600)
    // Refused posts spend nothing: not the agent's day, not the fingerprint.
    expect(await checkPost(kv, recreated, 'b0', { agent: 5, account: 6 }, now)).toMatchObject({ ok: true, postsToday: 1, accountPostsToday: 6 })
    // Another user is untouched; the next UTC day starts both counts again.
    expect(await checkPost(kv, { agentId: first.agentId, userId: `user-${randomUUID()}` }, 'c0', { agent: 50, account: 50 }, now)).toMatchObject({ ok: true, accountPostsToday: 1 })
    expect(await checkPost(kv, recreated, 'd0', { agent: 5, account: 5 }, now + 12 * 3600 * 1000)).toMatchObject({ ok: true, postsToday: 1, accountPostsToday: 1 })
  })

  it('concurrent posts through two agents of one account pass exactly the account’s limit', async () => {
    const kv = make()
    const userId = `user-${randomUUID()}`
    const a = { agentId: `agent-${randomUUID()}`, userId }
    const b = { agentId: `agent-${randomUUID()}`, userId }
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => checkPost(kv, i % 2 ? a : b, `t${i}`, { agent: 50, account: 7 })))
    expect(results.filter((r) => r.ok)).toHaveLength(7)
    expect(results.filter((r) => !r.ok && r.reason === 'account')).toHaveLength(33)
  })
})

describe('which store counts posts', () => {
  const services = (env: Record<string, string>, kv: string) =>
    ({ config: { KV_REST_API_URL: env.KV_REST_API_URL, KV_REST_API_TOKEN: env.KV_REST_API_TOKEN }, adapters: { kv }, kv: new MemoryKv() }) as unknown as Services
  it('KV_REST_API_* first, then the platform’s Upstash or in-process store, else none', () => {
    expect(socialLimiter(services({ KV_REST_API_URL: 'https://kv.example', KV_REST_API_TOKEN: 't' }, 'upstash')).store).toBe('kv-rest')
    expect(socialLimiter(services({ KV_REST_API_URL: 'https://kv.example' }, 'upstash')).store).toBe('upstash') // a URL without its token is not enough
    expect(socialLimiter(services({}, 'memory')).store).toBe('memory')
    expect(socialLimiter(services({}, 'none'))).toEqual({ kv: null, store: 'unavailable' })
  })
})

describe('post text', () => {
  it('normalises case, spacing, width and invisible characters; the fingerprint follows', async () => {
    expect(normalisePost('  Ｈｅｌｌｏ\u200b   World\n')).toBe('hello world')
    expect(await postFingerprint('Hello World')).toBe(await postFingerprint('hello\tworld '))
    expect(await postFingerprint('Hello World')).not.toBe(await postFingerprint('Hello Worlds'))
  })

  it('finds links however they are written, and not in ordinary prose', () => {
    for (const s of ['https://a.b', 'ftp://files.example/x', 'www.example.com', 'example.com', 'sub.example.co/x', 'bit.ly/abc', '192.168.1.1/admin', 'ＷＷＷ.example.org', 'example (dot) com']) {
      expect(containsUrl(s), s).toBe(true)
    }
    for (const s of ['Hello world.', 'Version 2.0 is out', 'e.g. this', 'Meet at 10.30', 'I.O.U. one coffee', 'a.b.c']) expect(containsUrl(s), s).toBe(false)
  })
})
