import { randomUUID } from 'node:crypto'
import { expect, it } from 'vitest'
import type { Kv, LimitRule, RateLimiter } from '../../lib/kv/types'
import { takeAllowance } from '../../lib/billing/usage'
import { commandsScript, rangeScript, slotsScript } from './scripts'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * Behaviour every Kv + RateLimiter adapter must share. Call inside a describe();
 * `make` is called per test. Every test uses its own key prefix under `root` (limiter keys
 * too, via the rule name) so runs against a shared Redis never collide and can be cleaned up.
 */
export function kvContract(make: () => Kv & RateLimiter, root = 'kvtest:') {
  const prefix = () => `${root}${randomUUID()}:`
  const rule = (p: string, name = 'login'): LimitRule => ({ name: `${p}${name}`, limit: 5, windowSec: 900 })

  it('round-trips JSON values', async () => {
    const kv = make()
    const p = prefix()
    const value = { a: 1, s: 'héllo', list: [true, null, 2.5], nested: { x: 'y' } }
    expect(await kv.set(`${p}obj`, value)).toBe(true)
    expect(await kv.get(`${p}obj`)).toEqual(value)
    // Values that look like base64 or numbers must survive the REST encoding too.
    await kv.set(`${p}str`, 'abcd')
    expect(await kv.get(`${p}str`)).toBe('abcd')
    await kv.set(`${p}num`, 1234)
    expect(await kv.get(`${p}num`)).toBe(1234)
    expect(await kv.get(`${p}missing`)).toBeNull()
  })

  it('expires values after ttlMs', async () => {
    const kv = make()
    const p = prefix()
    await kv.set(`${p}k`, 'v', { ttlMs: 80 })
    expect(await kv.get(`${p}k`)).toBe('v')
    await sleep(200)
    expect(await kv.get(`${p}k`)).toBeNull()
  })

  it('nx writes only when absent', async () => {
    const kv = make()
    const p = prefix()
    expect(await kv.set(`${p}k`, 1, { nx: true })).toBe(true)
    expect(await kv.set(`${p}k`, 2, { nx: true })).toBe(false)
    expect(await kv.set(`${p}k`, 3, { nx: true, ttlMs: 60_000 })).toBe(false)
    expect(await kv.get(`${p}k`)).toBe(1)
    // Once the key expires, nx may write again.
    expect(await kv.set(`${p}t`, 'a', { nx: true, ttlMs: 50 })).toBe(true)
    await sleep(150)
    expect(await kv.set(`${p}t`, 'b', { nx: true })).toBe(true)
    expect(await kv.get(`${p}t`)).toBe('b')
  })

  it('take returns then deletes, and is single-use under concurrency', async () => {
    const kv = make()
    const p = prefix()
    await kv.set(`${p}once`, { token: 't' })
    expect(await kv.take(`${p}once`)).toEqual({ token: 't' })
    expect(await kv.take(`${p}once`)).toBeNull()
    expect(await kv.get(`${p}once`)).toBeNull()

    await kv.set(`${p}race`, 'v')
    const results = await Promise.all([kv.take(`${p}race`), kv.take(`${p}race`)])
    expect(results.filter((r) => r === 'v')).toHaveLength(1)
    expect(results.filter((r) => r === null)).toHaveLength(1)
  })

  it('del removes a value and tolerates missing keys', async () => {
    const kv = make()
    const p = prefix()
    await kv.set(`${p}k`, 'v')
    await kv.del(`${p}k`)
    expect(await kv.get(`${p}k`)).toBeNull()
    await expect(kv.del(`${p}never`)).resolves.toBeUndefined()
  })

  it('limiter admits exactly `limit` of 100 parallel calls', async () => {
    const kv = make()
    const r = rule(prefix())
    const before = Date.now()
    const results = await Promise.all(Array.from({ length: 100 }, () => kv.limit(r, 'user-1')))
    const ok = results.filter((x) => x.success)
    const denied = results.filter((x) => !x.success)
    expect(ok).toHaveLength(5)
    expect(ok.map((x) => x.remaining).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4])
    expect(denied).toHaveLength(95)
    for (const x of denied) expect(x.remaining).toBe(0)
    for (const x of results) {
      expect(x.limit).toBe(5)
      expect(x.reset).toBeGreaterThan(before)
      expect(x.reset).toBeLessThanOrEqual(Date.now() + r.windowSec * 1000)
    }
  })

  it('limiter counters are separate per identifier and per rule name', async () => {
    const kv = make()
    const p = prefix()
    const login = rule(p, 'login')
    for (let i = 0; i < 5; i++) expect((await kv.limit(login, 'a')).success).toBe(true)
    expect((await kv.limit(login, 'a')).success).toBe(false)
    // Another identifier under the same rule, and the same identifier under another rule, start fresh.
    expect(await kv.limit(login, 'b')).toMatchObject({ success: true, remaining: 4 })
    expect(await kv.limit(rule(p, 'signup'), 'a')).toMatchObject({ success: true, remaining: 4 })
  })

  it('incr counts 200 concurrent increments exactly, and reads back through get', async () => {
    const kv = make()
    const p = prefix()
    const values = await Promise.all(Array.from({ length: 200 }, () => kv.incr(`${p}n`, 1, 60_000)))
    // Every increment saw a distinct value: none was lost or doubled.
    expect(new Set(values).size).toBe(200)
    expect(Math.max(...values)).toBe(200)
    expect(await kv.get(`${p}n`)).toBe(200)
    expect(await kv.incr(`${p}n`, 5, 60_000)).toBe(205)
    expect(await kv.incr(`${p}n`, -5, 60_000)).toBe(200)
  })

  it('incr sets the expiry on the first increment only', async () => {
    const kv = make()
    const p = prefix()
    expect(await kv.incr(`${p}t`, 2, 150)).toBe(2)
    await sleep(80)
    // A later increment with a longer ttl does not push the expiry out.
    expect(await kv.incr(`${p}t`, 1, 60_000)).toBe(3)
    await sleep(150)
    expect(await kv.get(`${p}t`)).toBeNull()
    expect(await kv.incr(`${p}t`, 1, 60_000)).toBe(1)
  })

  it('eval runs each script command with the same replies on every adapter', async () => {
    const kv = make()
    const p = prefix()
    const out = await kv.eval(commandsScript, [`${p}s`, `${p}c`, `${p}z`], ['héllo'])
    expect(out).toEqual(['héllo', 1, 3, -1, 9, 1, 0, 1, -2, -1])
  })

  it('eval ranges a sorted set by rank with scores, as ZRANGE ... WITHSCORES', async () => {
    const kv = make()
    const p = prefix()
    expect(await kv.eval(rangeScript, [`${p}z`], [])).toEqual([1, 'a', 1, 2, 'b', 2, 'bb', 2, 1, 'c', 3, 2, 'bb', 2, 'c', 3, 0, 0])
  })

  it('eval is atomic: 50 concurrent claims on 7 expiring slots admit exactly 7, and expired slots free up', async () => {
    const kv = make()
    const p = prefix()
    const now = Date.now()
    const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => kv.eval(slotsScript, [`${p}slots`], [now, 7, 60_000, `t${i}`])))
    expect(replies.filter(([ok]) => ok === 1)).toHaveLength(7)
    expect(Math.max(...replies.map(([, n]) => n))).toBe(7)
    // Past every ticket's expiry the set is empty again.
    expect(await kv.eval(slotsScript, [`${p}slots`], [now + 60_001, 7, 60_000, 'late'])).toEqual([1, 1])
  })

  it('the usage allowance script takes what fits, atomically: 50 concurrent takes of 3 from 100 take exactly 100, the last partly', async () => {
    const kv = make()
    const key = `${prefix()}usage`
    const replies = await Promise.all(Array.from({ length: 50 }, () => kv.eval(takeAllowance, [key], [3, 100, 60_000])))
    expect(replies.reduce((sum, [taken]) => sum + taken, 0)).toBe(100)
    expect(replies.filter(([taken]) => taken === 1)).toHaveLength(1)
    expect(replies.filter(([taken]) => taken === 0)).toHaveLength(50 - 34)
    expect(await kv.get(key)).toBe(100) // the counter reads as the plain number Kv.incr keeps
    expect(await kv.eval(takeAllowance, [key], [5, 100, 60_000])).toEqual([0, 100])
    // A counter past the allowance (BYOK counts without a cap) gives nothing and stays as it is.
    await kv.incr(key, 20, 60_000)
    expect(await kv.eval(takeAllowance, [key], [5, 100, 60_000])).toEqual([0, 120])
    expect(await kv.eval(takeAllowance, [`${prefix()}fresh`], [7, 100, 60_000])).toEqual([7, 7])
  })
}
