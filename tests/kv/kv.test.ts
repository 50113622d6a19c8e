import { randomUUID } from 'node:crypto'
import { createServer } from 'node:http'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MemoryKv } from '../../lib/kv/memory'
import { defineScript } from '../../lib/kv/script'
import { UpstashError, UpstashKv } from '../../lib/kv/upstash'
import { DependencyUnavailableError } from '../../lib/http/dependency'
import { listen } from '../support/loopback'
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

/**
 * UpstashKv against a stub that answers each request as the test says: how each of Upstash's answers is read.
 * A command Redis refused is a bug (thrown as it is, a 500); anything else means the store is not usable (503).
 */
describe('UpstashKv reading Upstash answers', () => {
  let answer: (body: string[]) => { status: number; body: string; headers?: Record<string, string> }
  const seen: Array<{ body: string[]; auth?: string; sync?: string; encoding?: string }> = []
  let stub: Awaited<ReturnType<typeof listen>>
  beforeAll(async () => {
    stub = await listen(
      createServer(async (req, res) => {
        let text = ''
        for await (const c of req) text += c
        const body = JSON.parse(text) as string[]
        const h = req.headers
        seen.push({ body, auth: h.authorization, sync: h['upstash-sync-token'] as string | undefined, encoding: h['upstash-encoding'] as string | undefined })
        const a = answer(body)
        if (a.status < 0) return // never answers
        res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers }).end(a.body)
      }),
    )
  })
  afterAll(() => stub?.close())
  const kv = (timeoutMs = 5_000) => new UpstashKv(stub.url, 'secret-token', { timeoutMs })
  const ok = (result: unknown, headers?: Record<string, string>) => ({ status: 200, body: JSON.stringify({ result }), headers })

  it('POSTs each command as a JSON array of strings with the bearer token, and carries the sync token it was given', async () => {
    seen.length = 0
    let n = 0
    answer = () => ok('OK', { 'upstash-sync-token': `sync-${++n}` })
    const store = kv()
    await store.set('k', { a: 1 }, { ttlMs: 500, nx: true })
    await store.del('k')
    expect(seen[0]).toEqual({ body: ['set', 'k', '{"a":1}', 'px', '500', 'nx'], auth: 'Bearer secret-token', sync: undefined, encoding: undefined })
    expect(seen[1]).toMatchObject({ body: ['del', 'k'], sync: 'sync-1' })
  })

  it('runs a script by EVALSHA of its SHA-1, then EVAL when Redis answers NOSCRIPT', async () => {
    seen.length = 0
    const script = defineScript({ name: 'probe', lua: 'return 1', local: () => 1 })
    answer = (b) => (b[0] === 'evalsha' ? { status: 400, body: JSON.stringify({ error: 'NOSCRIPT No matching script. Please use EVAL.' }) } : ok(1))
    expect(await kv().eval(script, ['a'], [2])).toBe(1)
    // sha1('return 1')
    expect(seen.map((s) => s.body)).toEqual([
      ['evalsha', 'e0e1f9fabfc9d4800c877a703b823ac0578ff8db', '1', 'a', '2'],
      ['eval', 'return 1', '1', 'a', '2'],
    ])
  })

  it('throws a command Redis refused as it is', async () => {
    answer = () => ({ status: 400, body: JSON.stringify({ error: 'WRONGTYPE Operation against a key holding the wrong kind of value' }) })
    const e = (await kv().get('k').catch((x: unknown) => x)) as UpstashError
    expect(e).toBeInstanceOf(UpstashError)
    expect(e.message).toBe('WRONGTYPE Operation against a key holding the wrong kind of value')
  })

  it.each([
    ['a wrong token (401 {error})', { status: 401, body: '{"error":"WRONGPASS invalid or missing auth token"}' }],
    ['a failure (500)', { status: 500, body: '{"error":"Internal error"}' }],
    ['an answer that is not JSON', { status: 502, body: '<html>Bad gateway</html>' }],
    ['a 200 without a result', { status: 200, body: '{}' }],
  ])('%s is the store unavailable', async (_, a) => {
    answer = () => a
    await expect(kv().get('k')).rejects.toBeInstanceOf(DependencyUnavailableError)
  })

  it('a store that never answers is unavailable at the call deadline', async () => {
    answer = () => ({ status: -1, body: '' })
    const e = (await kv(100).get('k').catch((x: unknown) => x)) as DependencyUnavailableError
    expect(e).toBeInstanceOf(DependencyUnavailableError)
    expect((e.cause as Error).name).toBe('TimeoutError')
  })

  it('a store that cannot be reached is unavailable', async () => {
    const down = await listen(createServer())
    await down.close() // nothing listens there now
    await expect(new UpstashKv(down.url, 't').get('k')).rejects.toBeInstanceOf(DependencyUnavailableError)
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

  it('carries the read-your-writes token of each answer into its next request', async () => {
    const kv = new UpstashKv(server.url, server.token, { timeoutMs: 15_000 })
    const from = server.syncTokens.length
    await kv.set(`${runRoot}sync`, 1)
    await kv.get(`${runRoot}sync`)
    const [first, second] = server.syncTokens.slice(from)
    expect(first).toBe('')
    expect(second).toMatch(/^\d+$/)
  })

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

    it('base64-encodes string results (but OK) only when Upstash-Encoding: base64 is sent', async () => {
      const k = `${runRoot}enc`
      await post('/', ['set', k, 'abcd', 'px', 60_000])
      expect((await post('/', ['get', k])).body).toEqual({ result: 'abcd' })
      expect((await post('/', ['get', k], { 'Upstash-Encoding': 'base64' })).body).toEqual({ result: 'YWJjZA==' })
      expect((await post('/', ['set', k, 'abcd'], { 'Upstash-Encoding': 'base64' })).body).toEqual({ result: 'OK' }) // OK never is
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
