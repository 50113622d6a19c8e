import { eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { DEPLOY_TIERS } from '../../../functions/backend/tiers'
import { subscriptionDeployments, users } from '../../../schema'
import { useHarness } from '../../support/harness'
import { backendCall } from '../../support/requests'

const KEY = 'deploy-shared-key'
const h = useHarness({ env: { INTERNAL_API_KEY: KEY } })
const unset = useHarness()

const id = (prefix: string) => `${prefix}_${crypto.randomUUID().replaceAll('-', '')}`
const deploy = (body: unknown, key: string | null = KEY, app = h.backend) =>
  backendCall(app, 'POST', '/api/subscriptions/deploy', { body, headers: key === null ? {} : { authorization: `Bearer ${key}` } })

const EXPECTED: Record<string, [string, number]> = {
  solo: ['2GB', 1], starter: ['2GB', 1], underground: ['2GB', 1],
  collective: ['4GB', 2], pro: ['4GB', 2],
  label: ['8GB', 4], scale: ['8GB', 4],
  network: ['16GB', 4],
  enterprise: ['32GB', 8], white_glove: ['32GB', 8],
}

describe('POST /api/subscriptions/deploy: happy', () => {
  it('every one of the ten tiers answers its resources (legacy names as the plan they became)', async () => {
    expect([...DEPLOY_TIERS].sort()).toEqual(Object.keys(EXPECTED).sort())
    for (const tier of DEPLOY_TIERS) {
      const customerId = id('cus')
      const subscriptionId = id('sub')
      const res = await deploy({ tier, customerId, subscriptionId })
      expect(res.status).toBe(200)
      const [memory, cpus] = EXPECTED[tier]
      expect(await res.json()).toEqual({ success: true, customerId, subscriptionId, tier, resources: { memory, cpus } })
    }
  })

  it('stripeCustomerId works like customerId; subscriptionId is optional; the record names the customer’s user', async () => {
    const customerId = id('cus')
    await h.db.update(users).set({ stripeCustomerId: customerId }).where(eq(users.id, h.users.alice.id))
    const res = await deploy({ tier: 'label', stripeCustomerId: customerId })
    expect(await res.json()).toMatchObject({ customerId, subscriptionId: null, tier: 'label' })
    const [row] = await h.db.select().from(subscriptionDeployments).where(eq(subscriptionDeployments.customerId, customerId))
    expect(row).toMatchObject({ tier: 'label', memoryGb: 8, cpus: 4, userId: h.users.alice.id, deployKey: `customer:${customerId}` })
  })

  it('idempotent: the same call retried (the queue retries) keeps one record', async () => {
    const body = { tier: 'collective', customerId: id('cus'), subscriptionId: id('sub') }
    const answers = await Promise.all(Array.from({ length: 5 }, () => deploy(body)))
    for (const a of answers) expect(a.status).toBe(200)
    const rows = await h.db.select().from(subscriptionDeployments).where(eq(subscriptionDeployments.subscriptionId, body.subscriptionId))
    expect(rows).toHaveLength(1)
    // An upgrade of the same subscription moves the record, still one.
    await deploy({ ...body, tier: 'network' })
    const [moved] = await h.db.select().from(subscriptionDeployments).where(eq(subscriptionDeployments.subscriptionId, body.subscriptionId))
    expect(moved).toMatchObject({ tier: 'network', memoryGb: 16, cpus: 4 })
  })
})

describe('POST /api/subscriptions/deploy: errors', () => {
  it('tier missing or unknown is 400', async () => {
    for (const tier of [undefined, 'free', 'SOLO', '']) {
      const res = await deploy({ tier, customerId: id('cus') })
      expect(res.status).toBe(400)
      expect(await res.json()).toMatchObject({ code: 'VALIDATION' })
    }
  })

  it('neither customerId nor stripeCustomerId is 400', async () => {
    const res = await deploy({ tier: 'solo', subscriptionId: id('sub') })
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ error: 'customerId or stripeCustomerId required', code: 'VALIDATION' })
  })

  it('subscriptionId must be sub_ then letters and digits', async () => {
    for (const subscriptionId of ['sub_', 'sub-123', 'cus_123', 'sub_12 3', "sub_1';drop", 'x'.repeat(300)]) {
      const res = await deploy({ tier: 'solo', customerId: id('cus'), subscriptionId })
      expect(res.status, subscriptionId).toBe(400)
    }
    const bad = await deploy({ tier: 'solo', customerId: 'customer-1' })
    expect(bad.status).toBe(400)
  })

  it('malformed JSON is 400 and records nothing', async () => {
    const before = (await h.db.select().from(subscriptionDeployments)).length
    const res = await h.backend.request('/api/subscriptions/deploy', { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', 'cf-connecting-ip': '203.0.113.9' }, body: '{"tier":' })
    expect(res.status).toBe(400)
    expect((await h.db.select().from(subscriptionDeployments)).length).toBe(before)
  })
})

describe('POST /api/subscriptions/deploy: security (shared key)', () => {
  const body = () => ({ tier: 'solo', customerId: id('cus'), subscriptionId: id('sub') })
  it('no key is 401, a wrong key 403, and nothing is recorded', async () => {
    const b = body()
    expect((await deploy(b, null)).status).toBe(401)
    const wrong = await deploy(b, 'not-the-key')
    expect(wrong.status).toBe(403)
    expect(await wrong.json()).toEqual({ error: 'Forbidden', code: 'FORBIDDEN' })
    expect(await h.db.select().from(subscriptionDeployments).where(eq(subscriptionDeployments.subscriptionId, b.subscriptionId))).toHaveLength(0)
  })

  it('a user API key or identity headers are not the shared key', async () => {
    const res = await deploy(body(), 'sk_' + 'a'.repeat(64))
    expect(res.status).toBe(403)
  })

  it('INTERNAL_API_KEY unset is 500 `Server misconfigured`', async () => {
    const res = await deploy(body(), 'anything', unset.backend)
    expect(res.status).toBe(500)
    expect(await res.json()).toEqual({ error: 'Server misconfigured', code: 'MISCONFIGURED' })
  })
})

describe('POST /api/subscriptions/deploy: the user named by the caller', () => {
  it('a userId the webhook job carries names the user even before their customer id is stored', async () => {
    const customerId = id('cus')
    const res = await deploy({ tier: 'solo', customerId, subscriptionId: id('sub'), userId: h.users.bob.id })
    expect(res.status).toBe(200)
    const [row] = await h.db.select().from(subscriptionDeployments).where(eq(subscriptionDeployments.customerId, customerId))
    expect(row.userId).toBe(h.users.bob.id)
  })

  it('an unknown userId records the deploy with no user rather than failing it', async () => {
    const customerId = id('cus')
    expect((await deploy({ tier: 'solo', customerId, userId: 'no-such-user' })).status).toBe(200)
    const [row] = await h.db.select().from(subscriptionDeployments).where(eq(subscriptionDeployments.customerId, customerId))
    expect(row.userId).toBeNull()
  })
})
