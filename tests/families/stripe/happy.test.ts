import { eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { signDelivery } from '../../../lib/queue/sign'
import { users } from '../../../schema'
import { call } from '../../support/requests'
import { PRICE_IDS, PRICES, stripeEvent } from '../../support/stripe-server'
import {
  billingState,
  completedEvent,
  delivered,
  deployments,
  eventRows,
  get,
  now,
  paidCheckout,
  purchases,
  startCheckout,
  stripeHarness,
  userRow,
} from './helpers'
import { useFixture } from '../../support/harness'
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts'
import { freshIp } from '../../support/requests'
import { sessionHeaders, signVoucher, units } from '../../support/payment-session'
import { seedWalletSignIn } from '../wallet/helpers'
import { charge, chargeApp } from '../payments/helpers'
import { cardSessionsOf, paidTopUp, topUpRows } from './helpers'

const t = useFixture(() => stripeHarness({ env: { QSTASH_CURRENT_SIGNING_KEY: 'stripe-happy-queue-key' } }))

describe('stripe: plan checkout', () => {
  it('303 to Stripe Checkout: a GBP subscription with a 7-day trial for the signed-in user, nothing stored yet', async () => {
    const { alice } = t.h.users
    const res = await get(t.h, '/api/stripe/checkout?plan=solo', alice)
    expect(res.status).toBe(303)
    const session = t.stripe.sessions.at(-1)!
    expect(res.headers.get('location')).toBe(session.url)
    expect(res.headers.get('location')).toMatch(/^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_test_/)
    const created = t.stripe.session(session.id)!
    expect(created).toMatchObject({
      mode: 'subscription',
      status: 'open',
      client_reference_id: alice.id,
      customer: null,
      customer_email: alice.email,
      metadata: { kind: 'plan', userId: alice.id, plan: 'solo' },
      currency: 'gbp',
      amount_total: 0, // nothing due today during the trial
      success_url: 'http://localhost:3000/checkout/success?session_id={CHECKOUT_SESSION_ID}&plan=solo',
      cancel_url: 'http://localhost:3000/pricing?cancelled=1',
      trialDays: 7,
      lineItems: [{ price: PRICE_IDS.STRIPE_PRICE_SOLO, quantity: 1 }],
    })
    expect(await billingState(t.h, alice.id)).toMatchObject({ plan: null, subscriptionStatus: 'inactive', stripeCustomerId: null })
  })

  it('each plan is checked out at its own monthly GBP price (29, 69, 149, 499)', async () => {
    const expected = { solo: 2900, collective: 6900, label: 14900, network: 49900 }
    for (const [plan, amount] of Object.entries(expected)) {
      const id = await startCheckout(t, t.h.users.bob, plan)
      const { lineItems, metadata } = t.stripe.session(id)!
      expect(metadata.plan).toBe(plan)
      expect(PRICES[lineItems[0].price]).toMatchObject({ unit_amount: amount, currency: 'gbp', recurring: true })
    }
  })

  it("reuses the buyer's Stripe customer when they have one (no email sent instead)", async () => {
    const carol = await t.h.seedUser('Carol', `carol-${crypto.randomUUID().slice(0, 6)}@example.com`)
    const customer = t.stripe.addCustomer(undefined, carol.email)
    await t.h.db.update(users).set({ stripeCustomerId: customer }).where(eq(users.id, carol.id))
    const id = await startCheckout(t, carol, 'label')
    expect(t.stripe.session(id)).toMatchObject({ customer, customer_email: null, client_reference_id: carol.id })
  })

  it('a user who had a subscription (now canceled) checks out again without a second trial', async () => {
    const fay = await t.h.seedUser('Fay', `fay-${crypto.randomUUID().slice(0, 6)}@example.com`)
    const customer = t.stripe.addCustomer(undefined, fay.email)
    await t.h.db.update(users).set({ stripeCustomerId: customer, subscriptionId: 'sub_old', subscriptionStatus: 'canceled' }).where(eq(users.id, fay.id))
    const id = await startCheckout(t, fay, 'solo')
    expect(t.stripe.session(id)).toMatchObject({ customer, trialDays: null, amount_total: 2900, metadata: { kind: 'plan', userId: fay.id, plan: 'solo' } })
  })

  it('an admin is sent to onboarding without any call to Stripe', async () => {
    const before = t.stripe.requests.length
    const res = await get(t.h, '/api/stripe/checkout?plan=network', t.h.users.admin)
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('http://localhost:3000/onboard?plan=network&paid=1&admin=1')
    expect(t.stripe.requests.length).toBe(before)
    expect((await billingState(t.h, t.h.users.admin.id)).plan).toBeNull()
  })
})

describe('stripe: a paid checkout, through the webhook and verify', () => {
  it('checkout.session.completed sets plan, status, customer and subscription, and deploys the runtime once', async () => {
    const dave = await t.h.seedUser('Dave', `dave-${crypto.randomUUID().slice(0, 6)}@example.com`)
    const session = await paidCheckout(t, dave, 'collective')
    const event = completedEvent(t, session.id)
    expect(await delivered(t, event)).toBe('applied')

    const state = await billingState(t.h, dave.id)
    expect(state).toMatchObject({ plan: 'collective', subscriptionStatus: 'active', subscriptionId: session.subscription, stripeCustomerId: session.customer })
    expect(state.subscriptionEventAt?.getTime()).toBe(event.created * 1000)
    expect(await eventRows(t.h, event.id)).toMatchObject([{ type: 'checkout.session.completed', outcome: 'applied' }])
    const deploys = t.published.filter((p) => (p.body as { userId: string }).userId === dave.id)
    expect(deploys).toEqual([
      {
        path: '/api/queue/subscription-deploy',
        body: { tier: 'collective', stripeCustomerId: session.customer, subscriptionId: session.subscription, userId: dave.id },
        opts: { deduplicationId: session.id, retries: 5 },
      },
    ])
    // Delivered by the queue to the receiver, which called the backend for real.
    await t.idle()
    expect(await deployments(t.h, session.customer!)).toMatchObject([
      { deployKey: session.subscription, subscriptionId: session.subscription, tier: 'collective', memoryGb: 4, cpus: 2 },
    ])
  })

  it('verify after the webhook: 200 {plan, active, nextBilling (the trial end), customerId}, the state unchanged', async () => {
    const erin = await t.h.seedUser('Erin', `erin-${crypto.randomUUID().slice(0, 6)}@example.com`)
    const session = await paidCheckout(t, erin, 'label')
    await delivered(t, completedEvent(t, session.id))
    const before = await billingState(t.h, erin.id)
    const res = await get(t.h, `/api/checkout/verify?session_id=${session.id}`, erin)
    expect(res.status).toBe(200)
    const trialEnd = t.stripe.subscriptions.get(session.subscription!)!.trial_end!
    expect(await res.json()).toEqual({ plan: 'label', status: 'active', nextBilling: new Date(trialEnd * 1000).toISOString(), customerId: session.customer })
    expect(await billingState(t.h, erin.id)).toEqual(before)
  })

  it('verify before the webhook applies the checkout; the webhook then changes nothing; one deploy record', async () => {
    const fay = await t.h.seedUser('Fay', `fay-${crypto.randomUUID().slice(0, 6)}@example.com`)
    const session = await paidCheckout(t, fay, 'network')
    const res = await get(t.h, `/api/checkout/verify?session_id=${session.id}`, fay)
    expect(res.status).toBe(200)
    const afterVerify = await billingState(t.h, fay.id)
    expect(afterVerify).toMatchObject({ plan: 'network', subscriptionStatus: 'active', subscriptionId: session.subscription, stripeCustomerId: session.customer })
    expect(afterVerify.subscriptionEventAt?.getTime()).toBe(session.created * 1000)
    await delivered(t, completedEvent(t, session.id))
    // The same state; only the watermark moved on to the event's time.
    const afterWebhook = await billingState(t.h, fay.id)
    expect({ ...afterWebhook, subscriptionEventAt: null }).toEqual({ ...afterVerify, subscriptionEventAt: null })
    expect(afterWebhook.subscriptionEventAt!.getTime()).toBeGreaterThanOrEqual(afterVerify.subscriptionEventAt!.getTime())
    await t.idle()
    expect(await deployments(t.h, session.customer!)).toHaveLength(1)
    // Every publish for this checkout carried the session id, so the queue delivers it once.
    const mine = t.published.filter((p) => (p.body as { userId: string }).userId === fay.id)
    expect(mine.length).toBeGreaterThanOrEqual(1)
    for (const p of mine) expect(p.opts?.deduplicationId).toBe(session.id)
  })
})

describe('stripe: subscription and invoice events', () => {
  it('follow the subscription through trial, failed payment, recovery, plan change and cancellation', async () => {
    const gil = await t.h.seedUser('Gil', `gil-${crypto.randomUUID().slice(0, 6)}@example.com`)
    const session = await paidCheckout(t, gil, 'solo')
    const sub = t.stripe.subscriptions.get(session.subscription!)!
    const base = now()
    expect(await delivered(t, stripeEvent('customer.subscription.created', { ...sub }, { created: base }))).toBe('applied')
    const trialEnd = new Date(sub.trial_end! * 1000)
    expect(await billingState(t.h, gil.id)).toMatchObject({ plan: 'solo', subscriptionStatus: 'active', subscriptionId: sub.id, stripeCustomerId: sub.customer, subscriptionPeriodEnd: trialEnd })

    expect(await delivered(t, stripeEvent('invoice.payment_failed', t.stripe.invoiceFor(sub.id, { paid: false }), { created: base + 1 }))).toBe('applied')
    expect((await userRow(t.h, gil.id)).subscriptionStatus).toBe('past_due')

    const invoice = t.stripe.invoiceFor(sub.id)
    expect(await delivered(t, stripeEvent('invoice.paid', invoice, { created: base + 2 }))).toBe('applied')
    expect(await billingState(t.h, gil.id)).toMatchObject({ subscriptionStatus: 'active', subscriptionPeriodEnd: new Date(invoice.lines.data[0].period.end * 1000) })

    // An upgrade in Stripe's portal: the price changes, the metadata does not say.
    const upgraded = { ...sub, status: 'active', metadata: { userId: gil.id }, items: { ...sub.items, data: [{ ...sub.items.data[0], price: { id: PRICE_IDS.STRIPE_PRICE_COLLECTIVE } }] } }
    expect(await delivered(t, stripeEvent('customer.subscription.updated', upgraded, { created: base + 3 }))).toBe('applied')
    expect(await billingState(t.h, gil.id)).toMatchObject({ plan: 'collective', subscriptionStatus: 'active' })

    expect(await delivered(t, stripeEvent('customer.subscription.updated', { ...upgraded, status: 'past_due' }, { created: base + 4 }))).toBe('applied')
    expect((await userRow(t.h, gil.id)).subscriptionStatus).toBe('past_due')

    const deleted = stripeEvent('customer.subscription.deleted', { ...upgraded, status: 'canceled' }, { created: base + 5 })
    expect(await delivered(t, deleted)).toBe('applied')
    expect(await billingState(t.h, gil.id)).toMatchObject({ plan: 'collective', subscriptionStatus: 'canceled', subscriptionPeriodEnd: null, subscriptionEventAt: new Date((base + 5) * 1000) })
    expect(await eventRows(t.h, deleted.id)).toMatchObject([{ type: 'customer.subscription.deleted', outcome: 'applied' }])
  })

  it("Stripe's statuses map onto the four the spec names", async () => {
    const hal = await t.h.seedUser('Hal', `hal-${crypto.randomUUID().slice(0, 6)}@example.com`)
    const session = await paidCheckout(t, hal, 'solo')
    const sub = t.stripe.subscriptions.get(session.subscription!)!
    const cases = [
      ['trialing', 'active'], ['active', 'active'], ['past_due', 'past_due'], ['unpaid', 'canceled'], ['paused', 'inactive'],
      ['incomplete', 'inactive'], ['incomplete_expired', 'canceled'], ['canceled', 'canceled'],
    ] as const
    let at = now()
    for (const [stripeStatus, ours] of cases) {
      expect(await delivered(t, stripeEvent('customer.subscription.updated', { ...sub, status: stripeStatus }, { created: ++at }))).toBe('applied')
      expect((await userRow(t.h, hal.id)).subscriptionStatus, stripeStatus).toBe(ours)
    }
  })

  it('an event type this service does not act on is recorded and acknowledged', async () => {
    const event = stripeEvent('customer.created', { id: 'cus_unrelated', object: 'customer' })
    expect(await delivered(t, event)).toBe('ignored')
    expect(await eventRows(t.h, event.id)).toMatchObject([{ type: 'customer.created', outcome: 'ignored' }])
  })
})

describe('stripe: credit packs and the expert setup', () => {
  it("verify of a subscriber's credit pack answers their own plan and status, not a plan the pack does not have", async () => {
    const jo = await t.h.seedUser('Jo', `jo-${crypto.randomUUID().slice(0, 6)}@example.com`)
    const customer = t.stripe.addCustomer(undefined, jo.email)
    const periodEnd = new Date(Math.ceil(Date.now() / 1000 + 20 * 86400) * 1000)
    await t.h.db
      .update(users)
      .set({ plan: 'label', subscriptionStatus: 'active', subscriptionId: 'sub_jo', stripeCustomerId: customer, subscriptionPeriodEnd: periodEnd })
      .where(eq(users.id, jo.id))
    expect((await call(t.h, 'POST', '/api/billing', { user: jo, body: { action: 'buy-credits', pack: 50 } })).status).toBe(200)
    const session = t.stripe.sessions.at(-1)!
    t.stripe.complete(session.id)
    const res = await get(t.h, `/api/checkout/verify?session_id=${session.id}`, jo)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ plan: 'label', status: 'active', nextBilling: periodEnd.toISOString(), customerId: customer })
    expect(await userRow(t.h, jo.id)).toMatchObject({ plan: 'label', credits: 5 })
  })

  it('a paid credit pack (bought through POST /api/billing) grants its credits once', async () => {
    const ivy = await t.h.seedUser('Ivy', `ivy-${crypto.randomUUID().slice(0, 6)}@example.com`)
    const res = await call(t.h, 'POST', '/api/billing', { user: ivy, body: { action: 'buy-credits', pack: 200 } })
    expect(res.status).toBe(200)
    const session = t.stripe.sessions.at(-1)!
    expect(t.stripe.session(session.id)).toMatchObject({ mode: 'payment', amount_total: 1500, currency: 'gbp', metadata: { kind: 'credits', pack: '200' } })
    t.stripe.complete(session.id)
    expect(await delivered(t, completedEvent(t, session.id))).toBe('applied')
    expect((await userRow(t.h, ivy.id)).credits).toBe(15)
    expect(await purchases(t.h, ivy.id)).toMatchObject([{ paymentId: session.id, pack: 200, credits: 15 }])
  })

  it('expert setup: {url} of a one-time 49 GBP Checkout with the slot in its metadata; the paid event is only logged', async () => {
    const date = new Date(Date.now() + 7 * 86_400_000).toISOString().slice(0, 10)
    const res = await get(t.h, `/api/stripe/expert-setup-checkout?date=${date}&time=14:30&email=Guest@Example.com`)
    expect(res.status).toBe(200)
    expect(res.headers.get('ratelimit-limit')).toBe('10')
    const { url } = (await res.json()) as { url: string }
    const session = t.stripe.sessions.find((s) => s.url === url)!
    expect(t.stripe.session(session.id)).toMatchObject({
      mode: 'payment',
      amount_total: 4900,
      currency: 'gbp',
      customer_email: 'guest@example.com',
      client_reference_id: null,
      metadata: { kind: 'expert-setup', date, time: '14:30' },
      success_url: 'http://localhost:3000/expert-setup/success',
      cancel_url: 'http://localhost:3000/pricing?cancelled=1',
      lineItems: [{ price: PRICE_IDS.STRIPE_PRICE_EXPERT_SETUP, quantity: 1 }],
    })
    t.stripe.complete(session.id)
    const event = completedEvent(t, session.id)
    expect(await delivered(t, event)).toBe('logged')
    expect(await eventRows(t.h, event.id)).toMatchObject([{ outcome: 'logged' }])
  })
})

describe('stripe: the subscription-deploy queue receiver', () => {
  it('a signed delivery calls the backend with the shared key: 200 deployed, the deploy recorded', async () => {
    const customer = `cus_${crypto.randomUUID().replaceAll('-', '')}`
    const body = JSON.stringify({ tier: 'solo', stripeCustomerId: customer, subscriptionId: null, userId: t.h.users.bob.id })
    const url = 'http://127.0.0.1:8787/api/queue/subscription-deploy'
    const res = await t.h.web.request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'upstash-signature': await signDelivery('stripe-happy-queue-key', url, body) }, body })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ ok: true, deployed: true })
    expect(await deployments(t.h, customer)).toMatchObject([{ deployKey: `customer:${customer}`, tier: 'solo', memoryGb: 2, cpus: 1 }])
  })
})

describe('stripe: a wallet top-up delivers', () => {
  it('a paid top-up credits the wallet’s card-funded session once (1 USD per 100 cents); the next adds to it; vouchers spend it', async () => {
    const kim = await t.h.seedUser('Kim', `kim-${crypto.randomUUID().slice(0, 6)}@example.com`)
    const wallet = privateKeyToAccount(generatePrivateKey())
    await seedWalletSignIn(t.h, kim, wallet.address)

    const first = await paidTopUp(t, kim, wallet.address, 1000)
    expect(first).toMatchObject({ payment_status: 'paid', amount_total: 1000, currency: 'usd', metadata: { kind: 'wallet-top-up', address: wallet.address } })
    expect(await delivered(t, completedEvent(t, first.id))).toBe('applied')
    const [session] = await cardSessionsOf(t.h, wallet.address)
    expect(session).toMatchObject({ source: 'card', depositAmount: '10000000', spentAmount: '0', depositTxHash: null, chainId: 8453 })
    expect(await topUpRows(t.h, wallet.address)).toMatchObject([{ paymentId: first.id, userId: kim.id, amountCents: 1000, sessionId: session.id }])

    const second = await paidTopUp(t, kim, wallet.address.toLowerCase(), 2500)
    expect(await delivered(t, completedEvent(t, second.id))).toBe('applied')
    const sessions = await cardSessionsOf(t.h, wallet.address)
    expect(sessions).toHaveLength(1)
    expect(sessions[0]).toMatchObject({ id: session.id, depositAmount: '35000000' })

    // The owner sees the balance where their top-ups are listed, and the session like any other.
    const listed = await call(t.h, 'GET', '/api/wallet/top-ups', { user: kim })
    expect(listed.status).toBe(200)
    expect(await listed.json()).toEqual({
      balances: [{ sessionId: session.id, address: wallet.address, deposit: '35', spent: '0', remaining: '35', currency: 'USDC' }],
      topUps: [
        { paymentId: second.id, address: wallet.address, amount: 2500, sessionId: session.id, createdAt: expect.any(String) },
        { paymentId: first.id, address: wallet.address, amount: 1000, sessionId: session.id, createdAt: expect.any(String) },
      ],
    })
    const shown = await t.h.web.request(`/api/wallet/sessions/${session.id}`, { headers: { 'x-wallet-address': wallet.address, 'cf-connecting-ip': freshIp() } })
    expect(shown.status).toBe(200)
    expect(await shown.json()).toMatchObject({ sessionId: session.id, source: 'card', deposit: '35', spent: '0', remaining: '35', depositTxHash: null, lastNonce: null })

    // The gateway's voucher flow spends it: a call of 0.01 USD against the wallet's signed voucher.
    const app = chargeApp(t.h)
    const voucher = await signVoucher(wallet, session.id, { cumulativeAmount: units('0.01'), nonce: 1n })
    const paid = await charge(app, sessionHeaders({ sessionId: session.id, wallet }, voucher))
    expect(paid.status).toBe(200)
    expect(paid.headers.get('x-session-remaining')).toBe('34.99')
  })

  it('checkout verify credits it too, and the webhook after it changes nothing', async () => {
    const lee = await t.h.seedUser('Lee', `lee-${crypto.randomUUID().slice(0, 6)}@example.com`)
    const wallet = privateKeyToAccount(generatePrivateKey()).address
    await seedWalletSignIn(t.h, lee, wallet)
    const paid = await paidTopUp(t, lee, wallet, 500)
    expect((await get(t.h, `/api/checkout/verify?session_id=${paid.id}`, lee)).status).toBe(200)
    expect(await delivered(t, completedEvent(t, paid.id))).toBe('duplicate')
    expect(await cardSessionsOf(t.h, wallet)).toMatchObject([{ depositAmount: '5000000' }])
    expect(await topUpRows(t.h, wallet)).toHaveLength(1)
  })
})
