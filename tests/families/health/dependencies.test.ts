import { inArray, sql } from 'drizzle-orm'
import { withUser } from '../../../lib/db/rls'
import { unavailableDependency } from '../../../lib/http/dependency'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { apiKeys, users } from '../../../schema'
import { csrfHeader, json } from '../auth/flow'
import { SESSION_COOKIE } from '../../../lib/auth/session'
import { PASSWORD, type SeededUser, useHarness } from '../../support/harness'
import { call, freshIp } from '../../support/requests'
import { realStores } from '../../support/stores'

/**
 * The database and the kv store going away while requests flow (README "When a dependency fails"): 503 with the
 * store's code and `Retry-After`, within the timeouts, one `dependency.unavailable` line, and the next request after
 * the store is back served as usual, by the same app. Real stores: fault proxies in front of Postgres (TCP) and the
 * Upstash REST server (HTTP); embedded: a kv store switched down, then the app's PGlite closed.
 */
const h = useHarness({ stores: { faults: true } })
const faults = () => h.storeFaults!

let warned: string[] = []
beforeEach(() => {
  warned = []
  vi.spyOn(console, 'warn').mockImplementation((line: string) => void warned.push(String(line)))
})
afterEach(async () => {
  vi.restoreAllMocks()
  if (faults().kvStore) faults().kvStore!.down = false
  await faults().kv?.set('pass')
  await faults().database?.set('pass')
})

const unavailableLines = () =>
  warned.flatMap((l) => {
    try {
      const e = JSON.parse(l)
      return e.event === 'dependency.unavailable' ? [e] : []
    } catch {
      return []
    }
  })

/** Sends `send()`, timing it. */
async function timed(send: () => Response | Promise<Response>) {
  const started = Date.now()
  const res = await send()
  return { res, ms: Date.now() - started }
}

async function expectUnavailable(res: Response, code: 'DATABASE_UNAVAILABLE' | 'KV_UNAVAILABLE') {
  expect(res.status).toBe(503)
  expect(res.headers.get('retry-after')).toBe('5')
  const body = await res.json()
  expect(body).toEqual({ error: code === 'KV_UNAVAILABLE' ? 'Key-value store unavailable' : 'Database unavailable', code })
  const dependency = code === 'KV_UNAVAILABLE' ? 'kv' : 'database'
  const line = unavailableLines().find((l) => l.dependency === dependency && l.requestId === res.headers.get('x-request-id'))
  expect(line).toMatchObject({ level: 'warn', event: 'dependency.unavailable', dependency, method: expect.any(String), route: expect.any(String) })
  // Never the connection string, the host or the SQL: only names and codes.
  expect(JSON.stringify(line)).not.toMatch(/postgres:\/\/|127\.0\.0\.1|select |insert /i)
}

const readKeys = (user: SeededUser) => call(h, 'GET', '/api/keys', { user })
const createKey = (user: SeededUser, name: string) => call(h, 'POST', '/api/keys', { user, body: { name } })
const register = (email: string) => h.web.request('/api/register', json({ email, password: 'password123', name: 'N' }, { 'cf-connecting-ip': freshIp() }))
const signIn = async (email: string) =>
  h.web.request('/api/auth/login', json({ email, password: PASSWORD }, { 'x-csrf-token': await csrfHeader(h), 'cf-connecting-ip': freshIp() }))

/** Switches the kv store down the way this store set can: `refuse` / `blackhole` through the proxy, or failing calls. */
async function kvDown(kind: 'refuse' | 'blackhole' = 'refuse') {
  if (faults().kv) await faults().kv!.set(kind)
  else faults().kvStore!.down = true
}
async function kvUp() {
  if (faults().kv) await faults().kv!.set('pass')
  else faults().kvStore!.down = false
}

// Budget: one kv call's deadline per kv call the request makes (the session's stamp, then the limiter), plus work.
const kvBudget = () => 2 * faults().timeouts.kvMs + 600

describe('the kv store goes away', () => {
  it('sign-up, sign-in and a limited write fail closed: 503 KV_UNAVAILABLE with Retry-After, quickly; a signed-in read still answers; then it recovers', async () => {
    const user = await h.seedUser('Kv', `kv-${crypto.randomUUID()}@example.com`)
    expect((await createKey(user, 'before')).status).toBe(201)

    await kvDown()
    const signUp = await timed(() => register(`kv-down-${crypto.randomUUID()}@example.com`))
    await expectUnavailable(signUp.res, 'KV_UNAVAILABLE')
    expect(signUp.ms).toBeLessThan(kvBudget())
    await expectUnavailable(await signIn(user.email), 'KV_UNAVAILABLE')
    const write = await timed(() => createKey(user, 'during'))
    await expectUnavailable(write.res, 'KV_UNAVAILABLE')
    expect(write.ms).toBeLessThan(kvBudget())
    // No limiter on the read: the session is read from the database when its revocation stamp cannot be.
    const read = await readKeys(user)
    expect(read.status).toBe(200)
    expect((await read.json()).keys.map((k: { name: string }) => k.name)).toEqual(['before'])

    await kvUp()
    expect((await register(`kv-up-${crypto.randomUUID()}@example.com`)).status).toBe(201)
    expect((await signIn(user.email)).status).toBe(200)
    expect((await createKey(user, 'after')).status).toBe(201)
    const names = (await (await readKeys(user)).json()).keys.map((k: { name: string }) => k.name).sort()
    expect(names).toEqual(['after', 'before'])
  })

  it.runIf(realStores)('a kv store that accepts and never answers, or answers late: 503 KV_UNAVAILABLE after the call deadline, not the SDK retry loop', async () => {
    const user = await h.seedUser('Hole', `hole-${crypto.randomUUID()}@example.com`)
    await kvDown('blackhole')
    const signUp = await timed(() => register(`hole-${crypto.randomUUID()}@example.com`))
    await expectUnavailable(signUp.res, 'KV_UNAVAILABLE')
    expect(signUp.ms).toBeGreaterThanOrEqual(faults().timeouts.kvMs - 20)
    expect(signUp.ms).toBeLessThan(kvBudget())
    const write = await timed(() => createKey(user, 'k'))
    await expectUnavailable(write.res, 'KV_UNAVAILABLE')
    expect(write.ms).toBeLessThan(kvBudget())

    await faults().kv!.set({ kind: 'delay', ms: faults().timeouts.kvMs + 300 })
    await expectUnavailable(await register(`late-${crypto.randomUUID()}@example.com`), 'KV_UNAVAILABLE')
    await faults().kv!.set({ kind: 'delay', ms: 30 })
    expect((await createKey(user, 'slow but in time')).status).toBe(201)
  })
})

describe('the database goes away', () => {
  it.runIf(realStores)('refused, then silent, then slow: 503 DATABASE_UNAVAILABLE with Retry-After within the timeouts; recovery; every 2xx write is kept', async () => {
    const db = faults().database!
    const user = await h.seedUser('Db', `db-${crypto.randomUUID()}@example.com`)
    const answered: Array<{ status: number; id?: string }> = []
    const write = async (name: string) => {
      const res = await createKey(user, name)
      const body = await res.clone().json()
      answered.push({ status: res.status, id: body.id })
      return res
    }
    expect((await write('a')).status).toBe(201)
    expect((await readKeys(user)).status).toBe(200)

    await db.set('refuse')
    const refusedRead = await timed(() => readKeys(user))
    await expectUnavailable(refusedRead.res, 'DATABASE_UNAVAILABLE')
    expect(refusedRead.ms).toBeLessThan(1000)
    await expectUnavailable(await write('b'), 'DATABASE_UNAVAILABLE')
    await expectUnavailable(await register(`db-down-${crypto.randomUUID()}@example.com`), 'DATABASE_UNAVAILABLE')
    const check = await h.web.request('/api/debug/dashboard-check', { headers: { cookie: user.cookie } })
    expect(check.status).toBe(200)
    expect((await check.json()).checks.database).toBe('error')

    await db.set('pass')
    expect((await readKeys(user)).status).toBe(200)
    expect((await write('c')).status).toBe(201)

    await db.set('blackhole')
    const { connectMs, queryMs } = faults().timeouts
    // A new connection waits out the connect timeout, a pooled one the answer's (and its ROLLBACK is not waited for).
    const budget = 2 * Math.max(connectMs, queryMs) + 800
    const silentRead = await timed(() => readKeys(user))
    await expectUnavailable(silentRead.res, 'DATABASE_UNAVAILABLE')
    expect(silentRead.ms).toBeLessThan(budget)
    const silentWrite = await timed(() => write('d'))
    await expectUnavailable(silentWrite.res, 'DATABASE_UNAVAILABLE')
    expect(silentWrite.ms).toBeLessThan(budget)

    await db.set({ kind: 'delay', ms: queryMs + connectMs + 200 })
    await expectUnavailable(await readKeys(user), 'DATABASE_UNAVAILABLE')

    await db.set('pass')
    expect((await readKeys(user)).status).toBe(200)
    expect((await write('e')).status).toBe(201)
    await db.set({ kind: 'delay', ms: 20 })
    expect((await write('f')).status).toBe(201)
    await db.set('pass')

    const kept = answered.filter((a) => a.status === 201).map((a) => a.id!)
    expect(kept).toHaveLength(4)
    const rows = await h.db.select({ id: apiKeys.id }).from(apiKeys).where(inArray(apiKeys.id, kept))
    expect(rows.map((r) => r.id).sort()).toEqual([...kept].sort())
  })

  it.runIf(realStores)('transactions whose BEGIN gets no answer give their pooled connections back (more of them than the pool holds); once back, the next is served', async () => {
    const db = faults().database!
    const user = await h.seedUser('Begin', `begin-${crypto.randomUUID()}@example.com`)
    const transaction = () => withUser(h.services.db, user.id, (tx) => tx.select({ id: users.id }).from(users))
    // Ten open connections in the app's pool first (it holds 10), so the failing transactions send BEGIN on them.
    await Promise.all(Array.from({ length: 10 }, () => withUser(h.services.db, user.id, (tx) => tx.execute(sql`select pg_sleep(0.05)`))))
    await db.set('blackhole')
    const failed = await Promise.allSettled(Array.from({ length: 14 }, transaction))
    await db.set('pass')
    expect(failed.map((r) => r.status === 'rejected' && unavailableDependency(r.reason))).toEqual(Array(14).fill('database'))
    // None left checked out: the pool is not exhausted, the transaction is served (and the harness's pool.end() resolves).
    expect(await transaction()).toEqual([{ id: user.id }])
  })

  it.runIf(!realStores)('the embedded database closed: signed-in reads and writes, sign-up and sign-in answer 503 DATABASE_UNAVAILABLE; the dashboard check says `error`', async () => {
    const user = await h.seedUser('Closed', `closed-${crypto.randomUUID()}@example.com`)
    const made = await createKey(user, 'kept')
    expect(made.status).toBe(201)
    const { id } = await made.json()
    expect(await h.db.select({ id: apiKeys.id }).from(apiKeys).where(inArray(apiKeys.id, [id]))).toHaveLength(1)
    expect(await h.db.select({ id: users.id }).from(users).where(inArray(users.id, [user.id]))).toHaveLength(1)

    await faults().closeDatabase!()
    // A session this process has not cached yet, so the request has to reach the database.
    await expectUnavailable(await signIn(user.email), 'DATABASE_UNAVAILABLE')
    await expectUnavailable(await register(`closed-${crypto.randomUUID()}@example.com`), 'DATABASE_UNAVAILABLE')
    await expectUnavailable(await call(h, 'GET', '/api/keys', { user: { ...user, cookie: `${SESSION_COOKIE}=${'0'.repeat(64)}` } }), 'DATABASE_UNAVAILABLE')
    await expectUnavailable(await createKey(user, 'lost'), 'DATABASE_UNAVAILABLE')
    const check = await h.web.request('/api/debug/dashboard-check', { headers: { cookie: user.cookie } })
    expect(check.status).toBe(200)
    expect((await check.json()).checks.database).toBe('error')
  })
})

describe('a genuine bug stays a 500', () => {
  it('a SQL error that is not about the connection answers 500 INTERNAL, not 503', async () => {
    const { unavailableDependency } = await import('../../../lib/http/dependency')
    expect(unavailableDependency(Object.assign(new Error('syntax error at or near "selec"'), { code: '42601' }))).toBeUndefined()
    expect(unavailableDependency(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBeUndefined()
    expect(unavailableDependency(Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) }))).toBeUndefined()
    expect(unavailableDependency(Object.assign(new Error('Failed query: select 1'), { cause: Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }) }))).toBe('database')
    expect(unavailableDependency(new Error('Connection terminated unexpectedly'))).toBe('database')
    expect(unavailableDependency(new Error('PGlite is closed'))).toBe('database')
  })
})
