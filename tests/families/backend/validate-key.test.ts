import { eq } from 'drizzle-orm'
import { beforeAll, describe, expect, it, vi } from 'vitest'
import { createBackendApp } from '../../../functions/backend/app'
import { generateApiKey } from '../../../lib/auth/api-keys'
import { PLANS } from '../../../lib/billing/plans'
import type { Services } from '../../../lib/context'
import type { Db } from '../../../lib/db/rls'
import { apiKeys } from '../../../schema'
import { insertApiKey, setPlan } from '../../auth/helpers'
import { useHarness } from '../../support/harness'
import { transactionReader } from '../../../lib/db/rls'

const INTERNAL = 'backend-internal-key'
let aliceKey: { key: string; id: string }
let bobKey: { key: string; id: string }

const h = useHarness({ env: { INTERNAL_API_KEY: INTERNAL } })
beforeAll(async () => {
  aliceKey = await insertApiKey(h.db, h.users.alice.id)
  bobKey = await insertApiKey(h.db, h.users.bob.id)
  await setPlan(h.db, h.users.alice.id, 'label', 'sub_a')
})

let ipCounter = 0
const freshIp = () => `198.51.100.${++ipCounter}`
const validate = (authorization?: string, app = h.backend) =>
  app.request('/api/validate-key', {
    method: 'POST',
    headers: { 'cf-connecting-ip': freshIp(), ...(authorization === undefined ? {} : { authorization }) },
  })
const INVALID = { error: 'Invalid API key', code: 'INVALID_API_KEY' }
const REQUIRED = { error: 'API key required: send Authorization: Bearer sk_...', code: 'API_KEY_REQUIRED' }
const IN_BODY = { error: 'API key required: send Authorization: Bearer sk_... (the key in the body is not read)', code: 'API_KEY_REQUIRED' }

describe('backend POST /api/validate-key: happy paths', () => {
  it("a valid key answers its owner, the plan and the plan's features", async () => {
    const res = await validate(`Bearer ${aliceKey.key}`)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ valid: true, userId: h.users.alice.id, plan: 'label', features: [...PLANS.label.features] })
  })

  it('a legacy stored plan is answered as its current name: pro is collective', async () => {
    const carol = await h.seedUser('Carol', `carol-${crypto.randomUUID().slice(0, 6)}@example.com`)
    await setPlan(h.db, carol.id, 'pro')
    const { key } = await insertApiKey(h.db, carol.id)
    expect(await (await validate(`Bearer ${key}`)).json()).toEqual({
      valid: true,
      userId: carol.id,
      plan: 'collective',
      features: [...PLANS.collective.features],
    })
  })

  it("a user with no plan yet reads as solo; bob's key is bob (no mixup between owners)", async () => {
    const body = await (await validate(`Bearer ${bobKey.key}`)).json()
    expect(body).toEqual({ valid: true, userId: h.users.bob.id, plan: 'solo', features: [...PLANS.solo.features] })
    expect(body.userId).not.toBe(h.users.alice.id)
  })

  it('marks the key as used', async () => {
    const k = await insertApiKey(h.db, h.users.bob.id, 'used')
    await validate(`Bearer ${k.key}`)
    const [row] = await h.db.select().from(apiKeys).where(eq(apiKeys.id, k.id))
    expect(row.lastUsedAt).toBeInstanceOf(Date)
  })

  it('passes the backend /api/* limiter: RateLimit-* headers, 120 per minute', async () => {
    const res = await validate(`Bearer ${aliceKey.key}`)
    expect(res.headers.get('ratelimit-limit')).toBe('120')
    expect(res.headers.get('ratelimit-remaining')).toBe('119')
    const refused = await validate()
    expect(refused.headers.get('ratelimit-limit')).toBe('120') // errors are counted too
  })

  it('is in the backend OpenAPI document with the bearer API-key scheme', async () => {
    const doc = await (await h.backend.request('/openapi.json')).json()
    const op = doc.paths['/api/validate-key'].post
    expect(op.security).toEqual([{ apiKey: [] }])
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '401', '500']))
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: 'http', scheme: 'bearer' })
    expect(doc.components.schemas.ValidatedKey.properties.plan.enum.sort()).toEqual(['collective', 'label', 'network', 'solo'])
  })
})

describe('backend POST /api/validate-key: errors', () => {
  it('no Authorization header is 401 API_KEY_REQUIRED, saying how to send the key', async () => {
    const res = await validate()
    expect(res.status).toBe(401)
    expect(await res.json()).toEqual(REQUIRED)
  })

  it('a valid key in the JSON body is not read: 401 API_KEY_REQUIRED, saying the body is not read', async () => {
    for (const body of [{ key: aliceKey.key }, { apiKey: aliceKey.key }]) {
      const res = await h.backend.request('/api/validate-key', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'cf-connecting-ip': freshIp() },
        body: JSON.stringify(body),
      })
      expect(res.status).toBe(401)
      expect(await res.json()).toEqual(IN_BODY)
    }
    // A body that is not JSON, or names no key, is just a missing key.
    for (const body of ['not json', '{"name":"x"}', '[]', 'null']) {
      const res = await h.backend.request('/api/validate-key', { method: 'POST', headers: { 'cf-connecting-ip': freshIp() }, body })
      expect(await res.json(), body).toEqual(REQUIRED)
    }
  })

  it('an Authorization header with no bearer token in it is 401 API_KEY_REQUIRED', async () => {
    for (const value of ['', aliceKey.key /* no scheme */, `Basic ${aliceKey.key}`, 'Bearer', `Bearer ${aliceKey.key} extra`, "Bearer ' OR 1=1 --"]) {
      const res = await validate(value)
      expect(res.status, value).toBe(401)
      expect(await res.json(), value).toEqual(REQUIRED)
    }
  })

  it('a bearer token that is not a valid key is 401 INVALID_API_KEY', async () => {
    for (const value of [
      `Bearer ${aliceKey.key.slice(0, -1)}`,
      `Bearer ${aliceKey.key}0`,
      `Bearer ${aliceKey.key.toUpperCase()}`,
      'Bearer sk_',
      "Bearer 'OR-1=1--",
    ]) {
      const res = await validate(value)
      expect(res.status, value).toBe(401)
      expect(await res.json()).toEqual(INVALID)
    }
  })

  it('a well-formed unknown key, a forged key with a real prefix, a deleted key, the shared key: 401', async () => {
    const k = await insertApiKey(h.db, h.users.bob.id, 'to delete')
    await h.db.delete(apiKeys).where(eq(apiKeys.id, k.id))
    const samePrefix = aliceKey.key.slice(0, 10) + '0'.repeat(aliceKey.key.length - 10)
    for (const key of [generateApiKey(), samePrefix, k.key, INTERNAL]) {
      const res = await validate(`Bearer ${key}`)
      expect(res.status).toBe(401)
      expect(await res.json()).toEqual(INVALID)
    }
  })

  it('a failing store is 500 {error: "Internal server error"} with nothing internal', async () => {
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {})
    const failing = { select: () => { throw new Error('connect ECONNREFUSED 10.0.0.1:5432') } } as unknown as Db
    const broken = createBackendApp((): Services => ({ ...h.services, db: failing, reader: transactionReader(failing) }))
    const res = await validate(`Bearer ${aliceKey.key}`, broken)
    expect(res.status).toBe(500)
    expect(await res.json()).toEqual({ error: 'Internal server error', code: 'INTERNAL' })
    spy.mockRestore()
  })

  it('GET is 405 with Allow: POST', async () => {
    const res = await h.backend.request('/api/validate-key', { headers: { authorization: `Bearer ${aliceKey.key}`, 'cf-connecting-ip': freshIp() } })
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toBe('POST')
  })
})
