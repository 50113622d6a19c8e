import { defineScript } from '../../lib/kv/script'

/**
 * Test scripts for the Kv.eval contract: each Redis command the in-process twin offers, in Lua and in JS.
 * `slots`: a bounded set of expiring tickets (ZSET scored by expiry): admits while fewer than ARGV[2] are live.
 */
export const slotsScript = defineScript<[number, number]>({
  name: 'test-slots',
  lua: `local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local n = redis.call('ZCARD', KEYS[1])
if n >= tonumber(ARGV[2]) then return {0, n} end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {1, n + 1}`,
  local(store, [key], [now, slots, ttl, member]) {
    store.zremrangebyscore(key, -Infinity, Number(now))
    const n = store.zcard(key)
    if (n >= Number(slots)) return [0, n]
    store.zadd(key, Number(now) + Number(ttl), member)
    store.pexpire(key, Number(ttl))
    return [1, n + 1]
  },
})

/** Every other command once, the replies in one array (absent values as -1 so both sides agree on arrays). */
export const commandsScript = defineScript<(number | string)[]>({
  name: 'test-commands',
  lua: `local out = {}
redis.call('SET', KEYS[1], ARGV[1], 'PX', 60000)
out[1] = redis.call('GET', KEYS[1])
out[2] = redis.call('PTTL', KEYS[1]) > 0 and 1 or 0
out[3] = redis.call('INCRBY', KEYS[2], 3)
out[4] = redis.call('PTTL', KEYS[2])
redis.call('ZADD', KEYS[3], 5, 'a')
redis.call('ZADD', KEYS[3], 9, 'b')
out[5] = tonumber(redis.call('ZSCORE', KEYS[3], 'b'))
out[6] = redis.call('ZREM', KEYS[3], 'a')
out[7] = redis.call('ZREM', KEYS[3], 'a')
out[8] = redis.call('ZCARD', KEYS[3])
redis.call('DEL', KEYS[1])
out[9] = redis.call('PTTL', KEYS[1])
out[10] = redis.call('GET', KEYS[1]) or -1
return out`,
  local(store, [str, counter, set], [value]) {
    store.set(str, value, 60_000)
    const out: (number | string)[] = [store.get(str) ?? -1, store.pttl(str) > 0 ? 1 : 0, store.incrby(counter, 3), store.pttl(counter)]
    store.zadd(set, 5, 'a')
    store.zadd(set, 9, 'b')
    out.push(store.zscore(set, 'b') ?? -1, store.zrem(set, 'a'), store.zrem(set, 'a'), store.zcard(set))
    store.del(str)
    out.push(store.pttl(str), store.get(str) ?? -1)
    return out
  },
})

/**
 * ZRANGE ... WITHSCORES by rank: ties ordered by member, negative ranks from the end, a range past the end empty.
 * Each range flattened as `member, score` (scores as numbers on both sides), the ranges' lengths first.
 */
export const rangeScript = defineScript<(number | string)[]>({
  name: 'test-range',
  lua: `redis.call('ZADD', KEYS[1], 3, 'c', 1, 'a', 2, 'bb', 2, 'b')
local out = {}
local ranges = {{0, 0}, {1, 2}, {-1, -1}, {-2, 10}, {5, 9}, {2, 1}}
for _, r in ipairs(ranges) do
  local hit = redis.call('ZRANGE', KEYS[1], r[1], r[2], 'WITHSCORES')
  out[#out + 1] = #hit / 2
  for i = 1, #hit, 2 do
    out[#out + 1] = hit[i]
    out[#out + 1] = tonumber(hit[i + 1])
  end
end
return out`,
  local(store, [key]) {
    store.zadd(key, 3, 'c')
    store.zadd(key, 1, 'a')
    store.zadd(key, 2, 'bb')
    store.zadd(key, 2, 'b')
    const out: (number | string)[] = []
    for (const [start, stop] of [[0, 0], [1, 2], [-1, -1], [-2, 10], [5, 9], [2, 1]]) {
      const hit = store.zrangeWithScores(key, start, stop)
      out.push(hit.length, ...hit.flat())
    }
    return out
  },
})
