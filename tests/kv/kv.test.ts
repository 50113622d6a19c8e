import { randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MemoryKv } from '../../lib/kv/memory'
import { defineScript } from '../../lib/kv/script'
import { UpstashKv } from '../../lib/kv/upstash'
import { startUpstashRestServer, type UpstashRestServer } from '../support/upstash-rest-server'
import { kvContract } from './kv-contract'

describe('MemoryKv', () => {
  kvContract(() => new MemoryKv())

  const windowMs = 900_000
  const rule = { name: 'roll', limit: 5, windowSec: 900 }

  it('rolls the limiter window over on its injected clock', async () => {
    let now = 2000 * windowMs + 1
    const kv = new MemoryKv(() => now)
    for (let i = 0; i < 5; i++) expect((await kv.limit(rule, 'u')).success).toBe(true)
    expect(await kv.limit(rule, 'u')).toEqual({ success: false, limit: 5, remaining: 0, reset: 2001 * windowMs })
    now = 2001 * windowMs - 1 // last millisecond of the window: still denied
    expect((await kv.limit(rule, 'u')).success).toBe(false)
    now = 2001 * windowMs // next window: fresh counter
    expect(await kv.limit(rule, 'u')).toEqual({ success: true, limit: 5, remaining: 4, reset: 2002 * windowMs })
  })

  it('expires ttl on its injected clock', async () => {
    let now = 1_000
    const kv = new MemoryKv(() => now)
    await kv.set('k', 'v', { ttlMs: 1_000 })
    now = 1_999
    expect(await kv.get('k')).toBe('v')
    now = 2_000
    expect(await kv.get('k')).toBeNull()
  })
})

const redisUrl = process.env.TEST_REDIS_URL
if (!redisUrl) console.warn('[kv.test] UpstashKv contract skipped: TEST_REDIS_URL not set')
// These tests own Redis db 1 so other test files can SELECT their own db in parallel.
const DB = 1
const runRoot = `kvtest:${randomUUID()}:`

const title = `UpstashKv via REST server → Redis${redisUrl ? '' : ' (skipped: TEST_REDIS_URL not set)'}`
;(redisUrl ? describe : describe.skip)(title, () => {
  let server: UpstashRestServer
  beforeAll(async () => {
    server = await startUpstashRestServer({ redisUrl: redisUrl!, db: DB })
  })
  afterAll(async () => {
    await server?.close()
    // Limiter keys expire with their window; plain keys without ttl would linger.
    const redis = new Redis(redisUrl!, { db: DB })
    const keys = await redis.keys(`*${runRoot}*`)
    if (keys.length) await redis.del(...keys)
    await redis.quit()
  })

  kvContract(() => new UpstashKv(server.url, server.token, { timeoutMs: 15_000 }), runRoot)

  it('counts a limiter window at rl:<rule>:<identifier>:<window>, expiring when the window ends (its injected clock)', async () => {
    const windowMs = 900_000
    let now = 2001 * windowMs - 60_000 // a minute before window 2000 ends
    const kv = new UpstashKv(server.url, server.token, { timeoutMs: 15_000, now: () => now })
    const rule = { name: `${runRoot}win`, limit: 2, windowSec: 900 }
    expect(await kv.limit(rule, 'u')).toEqual({ success: true, limit: 2, remaining: 1, reset: 2001 * windowMs })
    expect(await kv.limit(rule, 'u')).toEqual({ success: true, limit: 2, remaining: 0, reset: 2001 * windowMs })
    expect(await kv.limit(rule, 'u')).toEqual({ success: false, limit: 2, remaining: 0, reset: 2001 * windowMs })
    const redis = new Redis(redisUrl!, { db: DB })
    try {
      expect(await redis.get(`rl:${rule.name}:u:2000`)).toBe('3')
      const ttl = await redis.pttl(`rl:${rule.name}:u:2000`)
      expect(ttl).toBeGreaterThan(0)
      expect(ttl).toBeLessThanOrEqual(60_000)
    } finally {
      await redis.quit()
    }
    now = 2001 * windowMs // the next window: a fresh counter
    expect(await kv.limit(rule, 'u')).toEqual({ success: true, limit: 2, remaining: 1, reset: 2002 * windowMs })
  })

  it('runs a script by EVALSHA, EVAL only when Redis does not have it yet: a limiter check is then one round trip', async () => {
    const seen: string[][] = []
    server.onRequest = (_path, body) => {
      const cmds = (Array.isArray((body as unknown[])[0]) ? body : [body]) as string[][]
      seen.push(cmds.map((c) => c[0]))
    }
    try {
      const kv = new UpstashKv(server.url, server.token, { timeoutMs: 15_000 })
      // A script no Redis has seen (its text is new): EVALSHA misses, EVAL runs and caches it.
      const probe = defineScript({ name: 'probe', lua: `-- ${randomUUID()}\nreturn 7`, local: () => 7 })
      expect(await kv.eval(probe, [], [])).toBe(7)
      expect(seen).toEqual([['evalsha'], ['eval']])
      seen.length = 0
      expect(await kv.eval(probe, [], [])).toBe(7)
      expect(seen).toEqual([['evalsha']])

      const rule = { name: `${runRoot}rt`, limit: 5, windowSec: 900 }
      await kv.limit(rule, 'a') // caches the limiter's script if no earlier test did
      seen.length = 0
      const start = server.requests
      expect(await kv.limit(rule, 'b')).toMatchObject({ success: true, remaining: 4 })
      expect(server.requests - start).toBe(1)
      expect(seen).toEqual([['evalsha']])
    } finally {
      server.onRequest = undefined
    }
  })

  describe('REST protocol', () => {
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.token}`, ...headers },
        body: JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, body: await r.json() }))

    it('rejects a missing or wrong token with 401', async () => {
      const r = await post('/', ['ping'], { authorization: 'Bearer wrong' })
      expect(r.status).toBe(401)
    })

    it('base64-encodes string results only when Upstash-Encoding: base64 is sent', async () => {
      const k = `${runRoot}enc`
      await post('/', ['set', k, 'abcd', 'px', 60_000])
      expect((await post('/', ['get', k])).body).toEqual({ result: 'abcd' })
      expect((await post('/', ['get', k], { 'Upstash-Encoding': 'base64' })).body).toEqual({ result: 'YWJjZA==' })
    })

    it('answers errors with 400 {error}, and per command inside a pipeline', async () => {
      const k = `${runRoot}err`
      const one = await post('/', ['incr', `${runRoot}nope`, 'extra'])
      expect(one.status).toBe(400)
      expect(one.body.error).toMatch(/ERR/)
      const many = await post('/pipeline', [['set', k, 'x', 'px', 60_000], ['incr', k], ['get', k]])
      expect(many.status).toBe(200)
      expect(many.body).toEqual([{ result: 'OK' }, { error: expect.stringMatching(/not an integer/) }, { result: 'x' }])
    })
  })
})
