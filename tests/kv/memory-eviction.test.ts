import { describe, expect, it } from 'vitest'
import { MemoryKv, SWEEP_MIN_WRITES } from '../../lib/kv/memory'

/** Issue #9 finding 12: the in-process kv drops expired entries nobody asks for again. */
describe('MemoryKv eviction', () => {
  it('a key never read again is gone after expiry once enough writes have happened', async () => {
    let now = 1_000
    const kv = new MemoryKv(() => now)
    await kv.set('nonce:forgotten', 'n', { ttlMs: 1_000 })
    await kv.set('kept', 'forever')
    now = 2_000 // expired, never read
    for (let i = 0; i < SWEEP_MIN_WRITES; i++) await kv.set(`other:${i}`, i, { ttlMs: 10_000 })
    // Only the live entries remain: the forgotten nonce was swept without a read.
    expect(kv.size).toBe(SWEEP_MIN_WRITES + 1)
    expect(await kv.get('kept')).toBe('forever')
    expect(await kv.get('other:0')).toBe(0)
  })

  it('rate-limit windows of one-off clients do not pile up', async () => {
    let now = 0
    const kv = new MemoryKv(() => now)
    const rule = { name: 'burst', limit: 5, windowSec: 60 }
    // 10 000 distinct clients, one request each, spread over 100 minutes: only the recent windows stay.
    for (let i = 0; i < 10_000; i++) {
      now = i * 600 // 0.6 s apart
      await kv.limit(rule, `client-${i}`)
    }
    // One window is 60 s = 100 clients; the sweep runs at least every max(256, size/2) writes.
    expect(kv.size).toBeLessThan(100 + 2 * SWEEP_MIN_WRITES)
  })

  it('before any sweep an expired entry still reads as absent (read-time expiry is unchanged)', async () => {
    let now = 0
    const kv = new MemoryKv(() => now)
    await kv.set('k', 'v', { ttlMs: 10 })
    now = 10
    expect(kv.size).toBe(1)
    expect(await kv.get('k')).toBeNull()
    expect(kv.size).toBe(0)
  })

  it('sweep() keeps live entries and entries without a ttl', async () => {
    let now = 0
    const kv = new MemoryKv(() => now)
    await kv.set('short', 1, { ttlMs: 5 })
    await kv.set('long', 2, { ttlMs: 50 })
    await kv.set('none', 3)
    now = 5
    kv.sweep()
    expect(kv.size).toBe(2)
    expect([await kv.get('long'), await kv.get('none')]).toEqual([2, 3])
  })
})
