import { eq } from 'drizzle-orm'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { app as keysApp } from '../../../functions/keys/app'
import { createPlatformApp } from '../../../lib/app'
import type { Db } from '../../../lib/db/rls'
import { apiKeys } from '../../../schema'
import { BROWSER, useHarness } from '../../support/harness'
import { call } from '../../support/requests'
import { createKey, seedKeys, validate } from './helpers'
import { transactionReader } from '../../../lib/db/rls'

const h = useHarness()
afterEach(() => {
  vi.restoreAllMocks()
})

const countKeys = async (userId: string) => (await h.db.select().from(apiKeys).where(eq(apiKeys.userId, userId))).length

const create = (body: unknown, headers?: Record<string, string>) => call(h, 'POST', '/api/keys', { user: h.users.alice, body, headers })

async function expectValidation(res: Response, error: string) {
  expect(res.status).toBe(400)
  expect(await res.json()).toMatchObject({ error, code: 'VALIDATION' })
}

describe('keys: create errors', () => {
  it('missing, empty, blank or non-string name → 400 with the exact message', async () => {
    await expectValidation(await create({}), 'Name is required')
    await expectValidation(await create({ name: '' }), 'Name is required')
    await expectValidation(await create({ name: '   ' }), 'Name is required')
    await expectValidation(await create({ name: 42 }), 'Name must be a string')
    await expectValidation(await create({ name: null }), 'Name must be a string')
  })

  it('a 65-character name → 400; nothing stored', async () => {
    const before = await countKeys(h.users.alice.id)
    await expectValidation(await create({ name: 'x'.repeat(65) }), 'Name must be at most 64 characters')
    expect(await countKeys(h.users.alice.id)).toBe(before)
  })

  it('a JSON body that is not an object → 400', async () => {
    await expectValidation(await create('["a"]'), 'Request body must be a JSON object')
    await expectValidation(await create('"a"'), 'Request body must be a JSON object')
  })

  it('a non-JSON Content-Type → 415', async () => {
    const res = await create('name=a', { 'content-type': 'text/plain' })
    expect(res.status).toBe(415)
    expect(await res.json()).toEqual({ error: 'Unsupported Media Type', code: 'UNSUPPORTED_MEDIA_TYPE' })
  })

  it.each(['{"name": "a",', '{name: a}', ''])('malformed JSON %j → 400 {error:"Invalid JSON body"} exactly', async (raw) => {
    const res = await create(raw)
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({ error: 'Invalid JSON body', code: 'INVALID_JSON' })
  })

  it('the 11th key → 429; deleting one frees a slot', async () => {
    const user = await h.seedUser('Dana', 'dana@example.com')
    const made = await seedKeys(h, user.id, 10)
    const res = await call(h, 'POST', '/api/keys', { user, body: { name: 'eleventh' } })
    expect(res.status).toBe(429)
    expect(await res.json()).toEqual({ error: 'API key limit reached (10)', code: 'KEY_LIMIT' })
    expect(await countKeys(user.id)).toBe(10)

    expect((await call(h, 'DELETE', `/api/keys/${made[0].id}`, { user })).status).toBe(200)
    await createKey(h, user, 'replacement')
    expect(await countKeys(user.id)).toBe(10)
  })

  it('concurrent creates cannot exceed the limit: 8 existing + 10 in parallel → 2 created, 8 refused', async () => {
    const user = await h.seedUser('Erin', 'erin@example.com')
    await seedKeys(h, user.id, 8)
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => call(h, 'POST', '/api/keys', { user, body: { name: `burst${i}` } })),
    )
    const statuses = results.map((r) => r.status).sort()
    expect(statuses).toEqual([...Array(2).fill(201), ...Array(8).fill(429)])
    expect(await countKeys(user.id)).toBe(10)
  })
})

describe('keys: unknown ids', () => {
  it('GET and DELETE of an unknown id → 404 {error:"API key not found"}', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await call(h, method, `/api/keys/${crypto.randomUUID()}`, { user: h.users.alice })
      expect(res.status).toBe(404)
      expect(await res.json()).toEqual({ error: 'API key not found', code: 'NOT_FOUND' })
    }
  })
})

describe('keys: validate errors', () => {
  it('missing or non-string apiKey → 400', async () => {
    await expectValidation(await call(h, 'POST', '/api/keys/validate', { body: {} }), 'apiKey is required')
    await expectValidation(await validate(h, 12345), 'apiKey must be a string')
    await expectValidation(await validate(h, null), 'apiKey must be a string')
    const res = await call(h, 'POST', '/api/keys/validate', { body: '{"apiKey":' })
    expect(await res.json()).toEqual({ error: 'Invalid JSON body', code: 'INVALID_JSON' })
  })

  it('a wrong prefix, an unknown sk_ key, a malformed sk_ key or a deleted key → 401 {error:"Invalid API key"}', async () => {
    const deleted = await createKey(h, h.users.alice, 'to delete')
    expect((await call(h, 'DELETE', `/api/keys/${deleted.id}`, { user: h.users.alice })).status).toBe(200)
    const candidates = [`pk_${'a'.repeat(64)}`, `sk_${'0'.repeat(64)}`, 'sk_short', '', deleted.key]
    for (const apiKey of candidates) {
      const res = await validate(h, apiKey)
      expect(res.status, apiKey).toBe(401)
      expect(await res.json()).toEqual({ error: 'Invalid API key', code: 'INVALID_API_KEY' })
    }
  })

  it('more than 60 requests a minute from one IP → 429 with Retry-After; other IPs unaffected', async () => {
    const ip = { 'cf-connecting-ip': '203.0.113.7' }
    for (let i = 0; i < 60; i++) expect((await validate(h, 'pk_nope', ip)).status).toBe(401)
    const res = await validate(h, 'pk_nope', ip)
    expect(res.status).toBe(429)
    expect(await res.json()).toEqual({ error: 'Too many requests', code: 'RATE_LIMITED' })
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect((await validate(h, 'pk_nope', { 'cf-connecting-ip': '203.0.113.8' })).status).toBe(401)
  })
})

describe('keys: database failures → 500', () => {
  /** The keys family over a database whose `broken` methods throw (as a dropped connection would). */
  function appWithBroken(...broken: string[]) {
    const db = new Proxy(h.db, {
      get: (target, prop, receiver) =>
        broken.includes(String(prop))
          ? () => {
              throw new Error('db down')
            }
          : Reflect.get(target, prop, receiver),
    }) as Db
    return createPlatformApp(() => ({ ...h.services, db, reader: transactionReader(db) })).route('/', keysApp)
  }
  const post = (app: ReturnType<typeof appWithBroken>, path: string, body: unknown) =>
    app.request(path, {
      method: 'POST',
      headers: { cookie: h.users.alice.cookie, 'content-type': 'application/json', ...BROWSER },
      body: JSON.stringify(body),
    })

  it('create when the transaction fails → 500 {error:"Internal server error"}', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {})
    const res = await post(appWithBroken('transaction'), '/api/keys', { name: 'x' })
    expect(res.status).toBe(500)
    expect(await res.json()).toEqual({ error: 'Internal server error', code: 'INTERNAL' })
  })

  it('validate when the lookup fails → 500 {error:"Internal server error"}', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {})
    // the key lookup runs in an asService transaction
    const res = await post(appWithBroken('transaction'), '/api/keys/validate', { apiKey: `sk_${'a'.repeat(64)}` })
    expect(res.status).toBe(500)
    expect(await res.json()).toEqual({ error: 'Internal server error', code: 'INTERNAL' })
  })
})
