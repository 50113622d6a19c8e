import bcrypt from 'bcryptjs'
import { eq } from 'drizzle-orm'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { MAX_KEYS_PER_USER } from '../../../functions/keys/schemas'
import { limits } from '../../../lib/http/limits'
import { apiKeys } from '../../../schema'
import { type SeededUser, useHarness } from '../../support/harness'
import { call } from '../../support/requests'
import { freshWindow } from '../users/helpers'
import { seedKeys } from './helpers'

/**
 * Finding 9: one user could stall the server with creates at the key limit, each paying a bcrypt hash
 * (which blocks the event loop) before being refused. The seam is bcryptjs's `hash`, the one function
 * lib/auth/password.ts hashes with: a refused create must not reach it. Production's cost 10.
 */
let hashes: ReturnType<typeof vi.spyOn>
const h = useHarness({ env: { PASSWORD_HASH_COST: '10' } })
beforeEach(() => {
  hashes = vi.spyOn(bcrypt, 'hash')
})
afterEach(() => {
  vi.restoreAllMocks()
})

const create = (user: SeededUser, name = 'k') => call(h, 'POST', '/api/keys', { user, body: { name } })
const countKeys = async (userId: string) => (await h.db.select().from(apiKeys).where(eq(apiKeys.userId, userId))).length
let n = 0
/** A new user; seeding hashes its password, so the spy is cleared afterwards. */
async function freshUser() {
  const user = await h.seedUser('Kim', `kim-${++n}-${crypto.randomUUID().slice(0, 8)}@example.com`)
  hashes.mockClear()
  return user
}

describe('keys: refusals cost no hash', () => {
  it('a create at the limit is refused 429 KEY_LIMIT without hashing', async () => {
    const user = await freshUser()
    await seedKeys(h, user.id, MAX_KEYS_PER_USER)
    const res = await create(user)
    expect(res.status).toBe(429)
    expect(await res.json()).toEqual({ error: `API key limit reached (${MAX_KEYS_PER_USER})`, code: 'KEY_LIMIT' })
    expect(hashes).not.toHaveBeenCalled()
  })

  it('40 parallel creates at the limit: none hashes; the rate limit refuses all but 10, the key limit the rest', async () => {
    await freshWindow(limits.apiKeyCreate.windowSec, 10_000)
    const user = await freshUser()
    await seedKeys(h, user.id, MAX_KEYS_PER_USER)
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => create(user, `burst${i}`)))
    const bodies = await Promise.all(results.map((r) => r.json() as Promise<{ error: string; code?: string }>))
    expect(results.every((r) => r.status === 429)).toBe(true)
    expect(bodies.filter((b) => b.code === 'KEY_LIMIT')).toHaveLength(limits.apiKeyCreate.limit)
    expect(bodies.filter((b) => b.error === limits.apiKeyCreate.message && b.code === 'RATE_LIMITED')).toHaveLength(40 - limits.apiKeyCreate.limit)
    expect(hashes).not.toHaveBeenCalled()
    expect(await countKeys(user.id)).toBe(MAX_KEYS_PER_USER)
  })

  it('an invalid name is refused before any hash', async () => {
    const res = await call(h, 'POST', '/api/keys', { user: await freshUser(), body: { name: '   ' } })
    expect(res.status).toBe(400)
    expect(hashes).not.toHaveBeenCalled()
  })

  it('a create that passes every check hashes exactly once', async () => {
    const user = await freshUser()
    expect((await create(user)).status).toBe(201)
    expect(hashes).toHaveBeenCalledTimes(1)
  })
})

describe('keys: the stall, measured as a ratio', () => {
  const timed = async (fn: () => Promise<unknown>) => {
    const t0 = performance.now()
    await fn()
    return performance.now() - t0
  }

  it('ten parallel creates refused at the key limit take less than 3x one create that hashes (the old code hashed all ten)', async () => {
    const hasher = await freshUser()
    const one: number[] = []
    for (let i = 0; i < 3; i++) one.push(await timed(async () => expect((await create(hasher, `h${i}`)).status).toBe(201)))
    const hashOnce = one.sort((a, b) => a - b)[1]
    const user = await freshUser()
    await seedKeys(h, user.id, MAX_KEYS_PER_USER)
    const refused = await timed(async () => {
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => create(user, `r${i}`)))
      expect(results.map((r) => r.status)).toEqual(Array(10).fill(429))
    })
    // Ten hashes at cost 10 would make this ratio about 10; cheap refusals keep it well under 1.
    expect(refused / hashOnce).toBeLessThan(3)
  })
})

describe('keys: create is rate limited per user', () => {
  it(`the ${limits.apiKeyCreate.limit + 1}th create within a minute → 429 with RateLimit headers; another user is unaffected`, async () => {
    await freshWindow(limits.apiKeyCreate.windowSec, 20_000)
    const user = await freshUser()
    // Create and delete, so the key limit never stands in the way: only the rate limit can refuse.
    for (let i = 0; i < limits.apiKeyCreate.limit; i++) {
      const res = await create(user, `r${i}`)
      expect(res.status, `create ${i + 1}`).toBe(201)
      expect(res.headers.get('ratelimit-limit')).toBe(String(limits.apiKeyCreate.limit))
      const { id } = (await res.json()) as { id: string }
      expect((await call(h, 'DELETE', `/api/keys/${id}`, { user })).status).toBe(200)
    }
    hashes.mockClear()
    const refused = await create(user, 'one too many')
    expect(refused.status).toBe(429)
    expect(await refused.json()).toEqual({ error: limits.apiKeyCreate.message, code: 'RATE_LIMITED' })
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(refused.headers.get('ratelimit-remaining')).toBe('0')
    expect(hashes).not.toHaveBeenCalled()
    const other = await freshUser()
    expect((await create(other, 'other user')).status).toBe(201)
  })
})
