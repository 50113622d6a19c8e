import { eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { PLANS } from '../../../lib/billing/plans'
import { giveBackUnits, spendUnits } from '../../../lib/billing/usage'
import { open } from '../../../lib/secret-box'
import { providerKeys, users } from '../../../schema'
import { useFixture, useHarness } from '../../support/harness'
import { PRICE_IDS, startStripeServer, stripeEnv } from '../../support/stripe-server'
import { action, billing, freshUser, storedUser } from './helpers'

const stripe = useFixture(() => startStripeServer())
const h = useHarness(() => ({ env: stripeEnv(stripe) }))

describe('GET /api/billing', () => {
  it('lists the four plans from the spec, and a new user on solo, inactive, no BYOK, no credits, full allowance', async () => {
    const user = await freshUser(h)
    const body = await billing(h, user)
    expect(Object.keys(body).sort()).toEqual(['byokEnabled', 'byokProvider', 'creditUnits', 'credits', 'currentPlan', 'deprecated', 'plans', 'subscriptionStatus', 'usage'])
    expect(Object.keys(body.plans)).toEqual(['solo', 'collective', 'label', 'network'])
    expect(body.plans.solo).toMatchObject({ agents: 1, memoryGb: 2, cpus: 1, monthlyPrice: 29, currency: 'GBP', price: '£29.00', dailyUnits: 600 })
    expect(body.plans.collective).toMatchObject({ agents: 3, memoryGb: 4, monthlyPrice: 69 })
    expect(body.plans.label).toMatchObject({ agents: 10, memoryGb: 8, monthlyPrice: 149 })
    expect(body.plans.network).toMatchObject({ agents: -1, memoryGb: 16, monthlyPrice: 499, price: '£499.00' })
    expect(body).toMatchObject({
      currentPlan: 'solo',
      deprecated: false,
      subscriptionStatus: 'inactive',
      byokEnabled: false,
      byokProvider: null,
      credits: 0,
      creditUnits: 0,
      usage: { dailyUnits: 600, used: 0, remaining: 600 },
    })
  })

  it('legacy plan names read as their plan; `free` is reported as deprecated', async () => {
    const user = await freshUser(h)
    for (const [stored, shown] of [['starter', 'solo'], ['pro', 'collective'], ['scale', 'label'], ['network', 'network']] as const) {
      await h.db.update(users).set({ plan: stored, subscriptionStatus: 'active' }).where(eq(users.id, user.id))
      const body = await billing(h, user)
      expect(body.currentPlan).toBe(shown)
      expect(body.deprecated).toBe(false)
      expect(body.usage.dailyUnits).toBe(PLANS[shown].dailyUnits)
    }
    await h.db.update(users).set({ plan: 'free' }).where(eq(users.id, user.id))
    expect(await billing(h, user)).toMatchObject({ currentPlan: 'free', deprecated: true })
  })
})

describe('POST /api/billing: usage', () => {
  it('get-usage counts what spendUnits spent today and resets at the next midnight UTC', async () => {
    const user = await freshUser(h)
    await spendUnits(h.services, user.id, 'solo', 25)
    const now = Date.now()
    const body = await action(h, user, { action: 'get-usage' })
    expect(body).toMatchObject({ dailyUnits: 600, used: 25, remaining: 575 })
    const reset = new Date(body.resetsAt)
    expect(reset.toISOString()).toBe(body.resetsAt)
    expect(reset.getUTCHours() + reset.getUTCMinutes() + reset.getUTCSeconds() + reset.getUTCMilliseconds()).toBe(0)
    expect(reset.getTime()).toBeGreaterThan(now)
    expect(reset.getTime() - now).toBeLessThanOrEqual(24 * 60 * 60 * 1000)
    expect((await billing(h, user)).usage).toEqual({ dailyUnits: 600, used: 25, remaining: 575 })
  })

  it('200 concurrent increments of one user count exactly 200', async () => {
    const user = await freshUser(h)
    await Promise.all(Array.from({ length: 200 }, () => spendUnits(h.services, user.id, 'solo', 1)))
    expect(await action(h, user, { action: 'get-usage' })).toMatchObject({ dailyUnits: 600, used: 200, remaining: 400 })
  })
})

const setCredits = (id: string, credits: number, creditUnits = 0) => h.db.update(users).set({ credits, creditUnits }).where(eq(users.id, id))

describe('credits are spent once the day’s units are (1 credit = 100 units)', () => {
  it('the allowance pays first; what it cannot pay comes from credits, unit by unit; GET /api/billing and get-usage show the balance', async () => {
    const user = await freshUser(h)
    await setCredits(user.id, 2)
    expect(await spendUnits(h.services, user.id, 'solo', 590)).toMatchObject({ fromAllowance: 590, fromCredits: 0, balance: null })
    // 10 units left today: a call of 30 takes them, and 20 from the first credit.
    expect(await spendUnits(h.services, user.id, 'solo', 30)).toMatchObject({ used: 600, remaining: 0, fromAllowance: 10, fromCredits: 20, balance: { credits: 1, creditUnits: 180 } })
    expect(await storedUser(h, user.id)).toMatchObject({ credits: 1, creditUnits: 80 })
    expect(await billing(h, user)).toMatchObject({ credits: 1, creditUnits: 180, usage: { dailyUnits: 600, used: 600, remaining: 0 } })
    expect(await action(h, user, { action: 'get-usage' })).toMatchObject({ dailyUnits: 600, used: 600, remaining: 0, credits: 1, creditUnits: 180 })
    // Past the allowance everything comes from credits, across the credit boundary.
    expect(await spendUnits(h.services, user.id, 'solo', 100)).toMatchObject({ fromAllowance: 0, fromCredits: 100, balance: { credits: 0, creditUnits: 80 } })
    expect(await spendUnits(h.services, user.id, 'solo', 80)).toMatchObject({ fromCredits: 80, balance: { credits: 0, creditUnits: 0 } })
    expect(await billing(h, user)).toMatchObject({ credits: 0, creditUnits: 0, usage: { used: 600 } })
  })

  it('a give-back returns each part where it came from: allowance units to the day, credit units to the balance', async () => {
    const user = await freshUser(h)
    await setCredits(user.id, 1)
    await spendUnits(h.services, user.id, 'solo', 595)
    const spent = await spendUnits(h.services, user.id, 'solo', 15)
    expect(spent).toMatchObject({ fromAllowance: 5, fromCredits: 10 })
    expect(await storedUser(h, user.id)).toMatchObject({ credits: 0, creditUnits: 90 })
    await giveBackUnits(h.services, user.id, spent)
    expect(await storedUser(h, user.id)).toMatchObject({ credits: 1, creditUnits: 0 })
    expect(await action(h, user, { action: 'get-usage' })).toMatchObject({ used: 595, remaining: 5, credits: 1, creditUnits: 100 })
  })

  it('concurrent spends: with 20 units left today and 1 credit, 10 calls of 30 → exactly 4 paid, nothing left, nothing overspent', async () => {
    const user = await freshUser(h)
    await setCredits(user.id, 1)
    await spendUnits(h.services, user.id, 'solo', 580)
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => spendUnits(h.services, user.id, 'solo', 30)))
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(4)
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'USAGE_LIMIT' })
    expect(await storedUser(h, user.id)).toMatchObject({ credits: 0, creditUnits: 0 })
    expect(await action(h, user, { action: 'get-usage' })).toMatchObject({ used: 600, remaining: 0, credits: 0, creditUnits: 0 })
  })

  it('concurrent spends past the allowance: 3 credits, 40 calls of 10 units → exactly 30 paid', async () => {
    const user = await freshUser(h)
    await setCredits(user.id, 3)
    await spendUnits(h.services, user.id, 'solo', 600)
    const results = await Promise.allSettled(Array.from({ length: 40 }, () => spendUnits(h.services, user.id, 'solo', 10)))
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(30)
    expect(await storedUser(h, user.id)).toMatchObject({ credits: 0, creditUnits: 0 })
    expect((await action(h, user, { action: 'get-usage' })).used).toBe(600)
  })
})

describe('POST /api/billing: BYOK', () => {
  it('enable-byok seals the key (AES-GCM, key id stored beside it); only byokEnabled and the provider are readable', async () => {
    const user = await freshUser(h)
    const secret = `sk-live-${crypto.randomUUID()}`
    const res = await action(h, user, { action: 'enable-byok', apiKey: secret, provider: 'OpenAI' })
    expect(res).toEqual({ success: true, message: 'BYOK enabled for openai' })
    const body = await billing(h, user)
    expect(body).toMatchObject({ byokEnabled: true, byokProvider: 'openai' })
    expect(JSON.stringify(body)).not.toContain(secret)

    const [row] = await h.db.select().from(providerKeys).where(eq(providerKeys.userId, user.id))
    expect(row.keyId).toBe('session')
    expect(row.sealed).not.toContain(secret)
    expect(await open(h.services.config, row, user.id, 'byok')).toBe(secret)
  })

  it('enabling again replaces the key; disable-byok removes it, and answers the same when there is none', async () => {
    const user = await freshUser(h)
    await action(h, user, { action: 'enable-byok', apiKey: 'first-key', provider: 'openai' })
    await action(h, user, { action: 'enable-byok', apiKey: 'second-key', provider: 'anthropic' })
    const rows = await h.db.select().from(providerKeys).where(eq(providerKeys.userId, user.id))
    expect(rows).toHaveLength(1)
    expect(await open(h.services.config, rows[0], user.id, 'byok')).toBe('second-key')
    expect(await billing(h, user)).toMatchObject({ byokEnabled: true, byokProvider: 'anthropic' })

    expect(await action(h, user, { action: 'disable-byok' })).toEqual({ success: true, message: 'BYOK disabled' })
    expect(await h.db.select().from(providerKeys).where(eq(providerKeys.userId, user.id))).toHaveLength(0)
    expect(await billing(h, user)).toMatchObject({ byokEnabled: false, byokProvider: null })
    expect(await action(h, user, { action: 'disable-byok' })).toEqual({ success: true, message: 'BYOK disabled' })
  })
})

describe('POST /api/billing: checkouts', () => {
  it('create-checkout: a GBP subscription Checkout with the 7-day trial for the plan, bound to the caller', async () => {
    const user = await freshUser(h)
    const { url } = await action(h, user, { action: 'create-checkout', plan: 'collective' })
    const created = stripe.sessions.at(-1)!
    expect(url).toBe(created.url)
    const session = stripe.session(created.id)!
    expect(session).toMatchObject({ mode: 'subscription', client_reference_id: user.id, customer_email: user.email, currency: 'gbp' })
    // The trial: nothing is due today.
    expect(session.amount_total).toBe(0)
    expect(session.metadata).toMatchObject({ kind: 'plan', userId: user.id, plan: 'collective' })
    expect(session.lineItems).toEqual([{ price: PRICE_IDS.STRIPE_PRICE_COLLECTIVE, quantity: 1 }])
    expect(session.trialDays).toBe(7)
    expect(session.success_url).toBe('http://localhost:3000/checkout/success?session_id={CHECKOUT_SESSION_ID}&plan=collective')
    expect(session.cancel_url).toBe('http://localhost:3000/pricing?cancelled=1')
  })

  it('create-checkout after a subscription ended: no second trial (something is due today)', async () => {
    const user = await freshUser(h)
    const customer = stripe.addCustomer(undefined, user.email)
    await h.db.update(users).set({ stripeCustomerId: customer, subscriptionId: 'sub_ended', subscriptionStatus: 'canceled' }).where(eq(users.id, user.id))
    const { url } = await action(h, user, { action: 'create-checkout', plan: 'solo' })
    const created = stripe.sessions.at(-1)!
    expect(url).toBe(created.url)
    const session = stripe.session(created.id)!
    expect(session.trialDays).toBeNull()
    expect(session.amount_total).toBeGreaterThan(0)
    expect(session).toMatchObject({ customer, metadata: { kind: 'plan', userId: user.id, plan: 'solo' } })
  })

  it('an existing Stripe customer is reused rather than a new one made from the email', async () => {
    const user = await freshUser(h)
    const customer = stripe.addCustomer(undefined, user.email)
    await h.db.update(users).set({ stripeCustomerId: customer }).where(eq(users.id, user.id))
    await action(h, user, { action: 'create-checkout', plan: 'solo' })
    expect(stripe.sessions.at(-1)).toMatchObject({ customer, customer_email: null })
  })

  it('buy-credits: pack 50, 200, 500 (or `amount`) → 5, 15, 30 credits, the price, a Checkout url; nothing granted yet', async () => {
    const user = await freshUser(h)
    const cases = [
      [{ pack: 50 }, 5, '£5.00', PRICE_IDS.STRIPE_PRICE_CREDITS_50],
      [{ amount: 200 }, 15, '£15.00', PRICE_IDS.STRIPE_PRICE_CREDITS_200],
      [{ pack: 500 }, 30, '£30.00', PRICE_IDS.STRIPE_PRICE_CREDITS_500],
    ] as const
    for (const [choice, credits, price, priceId] of cases) {
      const body = await action(h, user, { action: 'buy-credits', ...choice })
      const created = stripe.session(stripe.sessions.at(-1)!.id)!
      expect(body).toEqual({ success: true, credits, price, url: created.url })
      expect(created).toMatchObject({ mode: 'payment', client_reference_id: user.id })
      expect(created.metadata).toMatchObject({ kind: 'credits', userId: user.id, credits: String(credits) })
      expect(created.lineItems).toEqual([{ price: priceId, quantity: 1 }])
    }
    // Credits come only from the webhook once Stripe confirms the payment.
    expect((await storedUser(h, user.id)).credits).toBe(0)
  })
})
