import { eq } from 'drizzle-orm'
import { describe, expect, it, vi } from 'vitest'
import { spendUnits } from '../../../lib/billing/usage'
import type { Config } from '../../../lib/config'
import { ApiError } from '../../../lib/http/errors'
import { seal } from '../../../lib/secret-box'
import { providerKeys, users } from '../../../schema'
import { createHarness, useFixture, useHarness } from '../../support/harness'
import { call } from '../../support/requests'
import { startStripeServer, stripeEnv } from '../../support/stripe-server'
import { action, billing, billingAction, freshUser, getBilling, storedUser } from './helpers'

const stripe = useFixture(() => startStripeServer())
const h = useHarness(() => ({ env: stripeEnv(stripe) }))
const unconfigured = useHarness()

const refused = async (body: unknown, error: string, code = 'VALIDATION') => {
  const user = await freshUser(h)
  const res = await billingAction(h, user, body)
  expect(res.status).toBe(400)
  expect(await res.json()).toMatchObject({ error, code })
}

describe('POST /api/billing: validation is 400 with the envelope', () => {
  it('an unknown or missing action', async () => {
    await refused({ action: 'refund-everything' }, 'Invalid action', 'INVALID_ACTION')
    await refused({}, 'Invalid action', 'INVALID_ACTION')
    await refused({ action: 42 }, 'Invalid action', 'INVALID_ACTION')
  })

  it('create-checkout with a plan outside the four (legacy names are not sold)', async () => {
    for (const plan of ['free', 'pro', 'enterprise', '', undefined]) await refused({ action: 'create-checkout', plan }, 'Invalid plan')
  })

  it('buy-credits with no pack, or a pack outside 50 | 200 | 500', async () => {
    await refused({ action: 'buy-credits' }, 'Invalid pack')
    for (const pack of [0, 100, 49.5, -50, '50', null]) await refused({ action: 'buy-credits', pack }, 'Invalid pack')
    await refused({ action: 'buy-credits', amount: 1000 }, 'Invalid pack')
  })

  it('enable-byok without apiKey or provider, blank, or oversize', async () => {
    const missing = 'apiKey and provider are required'
    await refused({ action: 'enable-byok', provider: 'openai' }, missing)
    await refused({ action: 'enable-byok', apiKey: 'k' }, missing)
    await refused({ action: 'enable-byok', apiKey: '   ', provider: 'openai' }, missing)
    const res = await billingAction(h, await freshUser(h), { action: 'enable-byok', apiKey: 'k'.repeat(513), provider: 'openai' })
    expect(res.status).toBe(400)
  })

  it('malformed JSON is 400 `Invalid JSON body` and stores nothing', async () => {
    const user = await freshUser(h)
    const res = await call(h, 'POST', '/api/billing', { user, body: '{"action": "enable-byok", "apiKey": ' })
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ error: 'Invalid JSON body', code: 'INVALID_JSON' })
    expect(await h.db.select().from(providerKeys).where(eq(providerKeys.userId, user.id))).toHaveLength(0)
  })
})

describe('POST /api/billing: already subscribed', () => {
  it('create-checkout while the subscription is active or past_due is 409 `Already subscribed`, Stripe not called; credits still sell', async () => {
    for (const status of ['active', 'past_due'] as const) {
      const user = await freshUser(h)
      await h.db.update(users).set({ plan: 'solo', subscriptionId: `sub_${status}`, subscriptionStatus: status }).where(eq(users.id, user.id))
      const before = stripe.sessions.length
      const res = await billingAction(h, user, { action: 'create-checkout', plan: 'collective' })
      expect(res.status, status).toBe(409)
      expect(await res.json()).toEqual({ error: 'Already subscribed', code: 'CONFLICT' })
      expect(stripe.sessions.length).toBe(before)
      expect((await billingAction(h, user, { action: 'buy-credits', pack: 50 })).status).toBe(200)
    }
    // A canceled or inactive subscription may check out again.
    for (const status of ['canceled', 'inactive'] as const) {
      const user = await freshUser(h)
      await h.db.update(users).set({ subscriptionId: `sub_${status}`, subscriptionStatus: status }).where(eq(users.id, user.id))
      expect((await billingAction(h, user, { action: 'create-checkout', plan: 'solo' })).status, status).toBe(200)
    }
  })
})

describe('a BYOK key this server can no longer open', () => {
  it('reads as not set (never a 500): byokEnabled false, no provider; enabling it again stores a key that opens', async () => {
    const user = await freshUser(h)
    await action(h, user, { action: 'enable-byok', apiKey: 'sk-own-key', provider: 'openai' })
    const [row] = await h.db.select().from(providerKeys).where(eq(providerKeys.userId, user.id))
    // Sealed under another key of the same id (a server whose secret changed), then under a key id it no longer has.
    const other = await seal({ ...h.services.config, sessionSecret: 'a-lost-secret' } as Config, 'sk-own-key', user.id, 'byok')
    for (const set of [{ keyId: other.keyId, sealed: other.sealed }, { keyId: 'retired-key', sealed: row.sealed }]) {
      await h.db.update(providerKeys).set(set).where(eq(providerKeys.userId, user.id))
      const res = await getBilling(h, user)
      expect(res.status).toBe(200)
      expect(await res.json()).toMatchObject({ byokEnabled: false, byokProvider: null })
    }
    await action(h, user, { action: 'enable-byok', apiKey: 'sk-own-key', provider: 'openai' })
    expect(await billing(h, user)).toMatchObject({ byokEnabled: true, byokProvider: 'openai' })
    // Disabling works whatever the stored key is.
    await h.db.update(providerKeys).set({ keyId: 'retired-key' }).where(eq(providerKeys.userId, user.id))
    expect(await action(h, user, { action: 'disable-byok' })).toMatchObject({ success: true })
    expect(await h.db.select().from(providerKeys).where(eq(providerKeys.userId, user.id))).toEqual([])
  })
})

describe('POST /api/billing: Stripe not configured or failing', () => {
  it('without STRIPE_SECRET_KEY both checkouts are 503 `Stripe not configured`; BYOK and usage still work', async () => {
    const user = await freshUser(unconfigured)
    for (const body of [{ action: 'create-checkout', plan: 'solo' }, { action: 'buy-credits', pack: 50 }]) {
      const res = await billingAction(unconfigured, user, body)
      expect(res.status).toBe(503)
      expect(await res.json()).toEqual({ error: 'Stripe not configured', code: 'NOT_CONFIGURED' })
    }
    expect(await action(unconfigured, user, { action: 'get-usage' })).toMatchObject({ used: 0 })
    expect(await action(unconfigured, user, { action: 'enable-byok', apiKey: 'k', provider: 'openai' })).toMatchObject({ success: true })
  })

  it('a plan or pack whose price id is not configured is 503 too', async () => {
    const partial = await createHarness({ env: { ...stripeEnv(stripe), STRIPE_PRICE_NETWORK: '', STRIPE_PRICE_CREDITS_500: '' } })
    try {
      const user = await freshUser(partial)
      expect((await billingAction(partial, user, { action: 'create-checkout', plan: 'network' })).status).toBe(503)
      expect((await billingAction(partial, user, { action: 'buy-credits', pack: 500 })).status).toBe(503)
      expect((await billingAction(partial, user, { action: 'create-checkout', plan: 'solo' })).status).toBe(200)
    } finally {
      await partial.close()
    }
  })

  it('Stripe failing or unreachable is 500 `Checkout failed` and changes nothing', async () => {
    const user = await freshUser(h)
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {})
    try {
      const before = stripe.sessions.length
      for (const failure of [500, 'unreachable', 400] as const) {
        stripe.failAll(failure)
        const res = await billingAction(h, user, { action: 'buy-credits', pack: 50 })
        expect(res.status).toBe(500)
        expect(await res.json()).toEqual({ error: 'Checkout failed', code: 'PAYMENT_PROVIDER_UNAVAILABLE' })
      }
      stripe.failAll(null)
      expect(stripe.sessions.length).toBe(before)
      const [row] = await h.db.select().from(users).where(eq(users.id, user.id))
      expect(row).toMatchObject({ credits: 0, plan: null, stripeCustomerId: null })
    } finally {
      stripe.failAll(null)
      errors.mockRestore()
    }
  })
})

describe('usage units: the allowance', () => {
  it('spending past the daily allowance is 429 USAGE_LIMIT with resetsAt, and the refused units are given back', async () => {
    const user = await freshUser(h)
    await spendUnits(h.services, user.id, 'solo', 590)
    const refusal = await spendUnits(h.services, user.id, 'solo', 20).catch((e: unknown) => e)
    expect(refusal).toBeInstanceOf(ApiError)
    const err = refusal as ApiError
    expect(err.status).toBe(429)
    expect(err.code).toBe('USAGE_LIMIT')
    expect(err.extra).toMatchObject({ dailyUnits: 600, used: 590 })
    expect(Number(err.headers?.['Retry-After'])).toBeGreaterThan(0)
    expect(await action(h, user, { action: 'get-usage' })).toMatchObject({ used: 590, remaining: 10 })
    // What is left can still be spent; with BYOK the allowance counts but does not cap.
    await spendUnits(h.services, user.id, 'solo', 10)
    await spendUnits(h.services, user.id, 'solo', 5, { byok: true })
    expect(await action(h, user, { action: 'get-usage' })).toMatchObject({ used: 605, remaining: 0 })
  })

  it('credits that cannot cover the rest: 429 USAGE_LIMIT, and neither the allowance nor the credits keep anything', async () => {
    const user = await freshUser(h)
    await h.db.update(users).set({ credits: 0, creditUnits: 40 }).where(eq(users.id, user.id))
    await spendUnits(h.services, user.id, 'solo', 590)
    const refusal = await spendUnits(h.services, user.id, 'solo', 60).catch((e: unknown) => e)
    expect(refusal).toMatchObject({ code: 'USAGE_LIMIT', status: 429, extra: { dailyUnits: 600, used: 590 } })
    expect(await storedUser(h, user.id)).toMatchObject({ credits: 0, creditUnits: 40 })
    expect(await action(h, user, { action: 'get-usage' })).toMatchObject({ used: 590, remaining: 10, credits: 0, creditUnits: 40 })
    // What they can pay together still pays: 10 from today, 40 from credits.
    expect(await spendUnits(h.services, user.id, 'solo', 50)).toMatchObject({ fromAllowance: 10, fromCredits: 40 })
    await expect(spendUnits(h.services, user.id, 'solo', 1)).rejects.toMatchObject({ code: 'USAGE_LIMIT' })
  })

  it('with BYOK the credits are never touched, even past the allowance', async () => {
    const user = await freshUser(h)
    await h.db.update(users).set({ credits: 2 }).where(eq(users.id, user.id))
    await spendUnits(h.services, user.id, 'solo', 700, { byok: true })
    expect(await storedUser(h, user.id)).toMatchObject({ credits: 2, creditUnits: 0 })
    expect(await action(h, user, { action: 'get-usage' })).toMatchObject({ used: 700, remaining: 0, credits: 2, creditUnits: 200 })
  })

  it('concurrent spends at the edge never admit more than the allowance', async () => {
    const user = await freshUser(h)
    await spendUnits(h.services, user.id, 'solo', 580)
    const results = await Promise.allSettled(Array.from({ length: 50 }, () => spendUnits(h.services, user.id, 'solo', 1)))
    expect(results.filter((r) => r.status === 'fulfilled').length).toBeLessThanOrEqual(20)
    const { used } = await action(h, user, { action: 'get-usage' })
    expect(used).toBeLessThanOrEqual(600)
  })
})
