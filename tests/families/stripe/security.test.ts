import { describe, expect, it } from 'vitest'
import { stripeClient } from '../../../lib/billing/stripe'
import { call } from '../../support/requests'
import { PRICE_IDS, signedEvent, stripeEvent } from '../../support/stripe-server'
import {
  billingState,
  completedEvent,
  deliver,
  delivered,
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
import { cardSessionsOf, paidTopUp, topUpRows } from './helpers'
import { seedWalletSignIn } from '../wallet/helpers'

const t = useFixture(() => stripeHarness())

const newUser = (name: string) => t.h.seedUser(name, `${name.toLowerCase()}-${crypto.randomUUID().slice(0, 6)}@example.com`)
const publishesFor = (userId: string) => t.published.filter((p) => (p.body as { userId?: string }).userId === userId)

/** A credit pack bought through POST /api/billing and paid on Stripe: the completed session. */
async function paidCredits(user: Awaited<ReturnType<typeof newUser>>, pack = 500) {
  const res = await call(t.h, 'POST', '/api/billing', { user, body: { action: 'buy-credits', pack } })
  expect(res.status).toBe(200)
  return t.stripe.complete(t.stripe.sessions.at(-1)!.id)
}

describe('stripe webhook: signatures', () => {
  it('forged, tampered, missing, malformed or stale signatures → 400 WEBHOOK_SIGNATURE_INVALID, nothing written', async () => {
    const victim = await newUser('Victim')
    const session = await paidCheckout(t, victim, 'network')
    const event = completedEvent(t, session.id)
    const genuine = signedEvent(t.stripe.webhookSecret, event)
    const tampered = JSON.stringify({ ...event, data: { object: { ...(event.data.object as object), client_reference_id: t.h.users.bob.id } } })
    const attempts: Array<[string, Response | Promise<Response>]> = [
      ['another secret', deliver(t, event, { secret: 'whsec_attacker' })],
      ['tampered body', deliver(t, event, { body: tampered, headers: { 'stripe-signature': genuine.signature } })],
      ['no header', t.h.web.request('/api/stripe/webhook', { method: 'POST', headers: { 'content-type': 'application/json' }, body: genuine.payload })],
      ['malformed header', deliver(t, event, { headers: { 'stripe-signature': 'v1=deadbeef' } })],
      ['oversized header', deliver(t, event, { headers: { 'stripe-signature': `t=1,v1=${'a'.repeat(5000)}` } })],
      ['stale (6 minutes old)', deliver(t, event, { timestamp: now() - 360 })],
      ['just past the tolerance', deliver(t, event, { timestamp: now() - 302 })],
    ]
    for (const [what, pending] of attempts) {
      const res = await pending
      expect(res.status, what).toBe(400)
      expect(await res.json()).toEqual({ error: 'Invalid signature', code: 'WEBHOOK_SIGNATURE_INVALID' })
    }
    expect(await eventRows(t.h, event.id)).toEqual([])
    expect(await billingState(t.h, victim.id)).toMatchObject({ plan: null, subscriptionStatus: 'inactive', stripeCustomerId: null })
    expect(await billingState(t.h, t.h.users.bob.id)).toMatchObject({ plan: null, subscriptionStatus: 'inactive' })
    expect(publishesFor(victim.id)).toEqual([])
    // The genuine delivery, within the tolerance, is accepted.
    expect(await delivered(t, event)).toBe('applied')
  })
})

describe('stripe webhook: at most once', () => {
  it('a replayed delivery → 200 duplicate: no second effect, no second deploy', async () => {
    const user = await newUser('Replay')
    const session = await paidCheckout(t, user, 'solo')
    const event = completedEvent(t, session.id)
    const signed = signedEvent(t.stripe.webhookSecret, event)
    const send = () => t.h.web.request('/api/stripe/webhook', { method: 'POST', headers: signed.headers, body: signed.payload })
    expect(await (await send()).json()).toEqual({ received: true, outcome: 'applied' })
    const after = await billingState(t.h, user.id)
    expect(await (await send()).json()).toEqual({ received: true, outcome: 'duplicate' })
    expect(await billingState(t.h, user.id)).toEqual(after)
    expect(publishesFor(user.id)).toHaveLength(1)
    expect(await eventRows(t.h, event.id)).toMatchObject([{ outcome: 'applied' }])
  })

  it('10 concurrent deliveries of one event → one effect: credits granted once, one event row', async () => {
    const user = await newUser('Concurrent')
    const session = await paidCredits(user, 500)
    const event = completedEvent(t, session.id)
    const results = await Promise.all(Array.from({ length: 10 }, () => deliver(t, event)))
    const outcomes = await Promise.all(results.map(async (r) => (expect(r.status).toBe(200), ((await r.json()) as { outcome: string }).outcome)))
    expect(outcomes.filter((o) => o === 'applied')).toHaveLength(1)
    expect(outcomes.filter((o) => o === 'duplicate')).toHaveLength(9)
    expect((await userRow(t.h, user.id)).credits).toBe(30)
    expect(await purchases(t.h, user.id)).toHaveLength(1)
    expect(await eventRows(t.h, event.id)).toHaveLength(1)
  })

  it('10 concurrent deliveries of a plan checkout → one deploy published', async () => {
    const user = await newUser('ConcurrentPlan')
    const session = await paidCheckout(t, user, 'label')
    const event = completedEvent(t, session.id)
    const results = await Promise.all(Array.from({ length: 10 }, () => deliver(t, event)))
    for (const r of results) expect(r.status).toBe(200)
    expect(publishesFor(user.id)).toHaveLength(1)
    expect(await billingState(t.h, user.id)).toMatchObject({ plan: 'label', subscriptionStatus: 'active' })
  })

  it('one payment, two different events (completed, then async_payment_succeeded) and a verify → credits once', async () => {
    const user = await newUser('Credits')
    const session = await paidCredits(user, 50)
    expect(await delivered(t, completedEvent(t, session.id))).toBe('applied')
    expect(await delivered(t, completedEvent(t, session.id, { type: 'checkout.session.async_payment_succeeded' }))).toBe('duplicate')
    const verify = await get(t.h, `/api/checkout/verify?session_id=${session.id}`, user)
    expect(verify.status).toBe(200)
    // A credit pack changes no plan: the answer is the account's own state (never subscribed), not `active`.
    expect(await verify.json()).toEqual({ plan: 'solo', status: 'inactive', nextBilling: null, customerId: session.customer })
    expect((await userRow(t.h, user.id)).credits).toBe(5)
    expect(await purchases(t.h, user.id)).toMatchObject([{ paymentId: session.id, pack: 50, credits: 5 }])
  })
})

describe('stripe webhook: order', () => {
  it('an older customer.subscription.updated after a newer one changes nothing and is recorded as stale', async () => {
    const user = await newUser('Order')
    const session = await paidCheckout(t, user, 'solo')
    expect(await delivered(t, completedEvent(t, session.id, { created: now() - 100 }))).toBe('applied')
    const sub = t.stripe.subscriptions.get(session.subscription!)!
    const newer = stripeEvent('customer.subscription.updated', { ...sub, status: 'canceled' }, { created: now() })
    const older = stripeEvent('customer.subscription.updated', { ...sub, status: 'active' }, { created: now() - 50 })
    expect(await delivered(t, newer)).toBe('applied')
    const after = await billingState(t.h, user.id)
    expect(after.subscriptionStatus).toBe('canceled')
    expect(await delivered(t, older)).toBe('stale')
    expect(await billingState(t.h, user.id)).toEqual(after)
    expect(await eventRows(t.h, older.id)).toMatchObject([{ outcome: 'stale' }])
    // A checkout replayed after the cancellation (its event older) does not reactivate or redeploy either.
    const deploys = publishesFor(user.id).length
    expect(await delivered(t, completedEvent(t, session.id, { created: now() - 100 }))).toBe('stale')
    // Verify applies nothing (stale) and says so: the stored state, canceled, not `active`.
    const verify = await get(t.h, `/api/checkout/verify?session_id=${session.id}`, user)
    expect(verify.status).toBe(200)
    expect(await verify.json()).toEqual({ plan: 'solo', status: 'canceled', nextBilling: null, customerId: session.customer })
    expect(await billingState(t.h, user.id)).toEqual(after)
    expect(publishesFor(user.id)).toHaveLength(deploys)
  })

  it("events about a subscription the user has left, or an unknown customer, change nothing (200, recorded)", async () => {
    const user = await newUser('Moved')
    // Two Checkouts opened before either completed (a second subscription is refused once one is active).
    const first = await paidCheckout(t, user, 'solo')
    const second = await paidCheckout(t, user, 'collective')
    await delivered(t, completedEvent(t, first.id, { created: now() - 10 }))
    await delivered(t, completedEvent(t, second.id))
    const state = await billingState(t.h, user.id)
    expect(state).toMatchObject({ plan: 'collective', subscriptionId: second.subscription, subscriptionStatus: 'active' })
    const old = t.stripe.subscriptions.get(first.subscription!)!
    const deleted = stripeEvent('customer.subscription.deleted', { ...old, status: 'canceled' }, { created: now() + 5 })
    expect(await delivered(t, deleted)).toBe('other_subscription')
    expect(await delivered(t, stripeEvent('invoice.payment_failed', t.stripe.invoiceFor(old.id, { paid: false }), { created: now() + 6 }))).toBe('other_subscription')
    expect(await billingState(t.h, user.id)).toEqual(state)

    const stranger = stripeEvent('customer.subscription.updated', { ...old, id: 'sub_stranger', customer: 'cus_stranger', metadata: {} })
    expect(await delivered(t, stranger)).toBe('unknown_user')
    expect(await eventRows(t.h, stranger.id)).toMatchObject([{ outcome: 'unknown_user' }])
  })
})

describe('checkout verify: ownership', () => {
  it("another user's checkout session → 403 FORBIDDEN; neither user's state changes", async () => {
    const { alice, bob } = t.h.users
    const id = await startCheckout(t, alice, 'label')
    t.stripe.complete(id)
    const [aliceBefore, bobBefore] = [await billingState(t.h, alice.id), await billingState(t.h, bob.id)]
    const res = await get(t.h, `/api/checkout/verify?session_id=${id}`, bob)
    expect(res.status).toBe(403)
    expect(await res.json()).toEqual({ error: 'Checkout session belongs to another user', code: 'FORBIDDEN' })
    expect(await billingState(t.h, alice.id)).toEqual(aliceBefore)
    expect(await billingState(t.h, bob.id)).toEqual(bobBefore)
    expect(publishesFor(alice.id)).toEqual([])
  })

  it('a session whose metadata names another user than its client_reference_id → 403', async () => {
    const { alice, bob } = t.h.users
    const stripe = stripeClient(t.h.services.config)!
    const session = await stripe.checkout.sessions.create({
      mode: 'subscription',
      line_items: [{ price: PRICE_IDS.STRIPE_PRICE_SOLO, quantity: 1 }],
      client_reference_id: bob.id,
      metadata: { kind: 'plan', userId: alice.id, plan: 'solo' },
      success_url: 'http://localhost:3000/x',
    })
    t.stripe.complete(session.id)
    const res = await get(t.h, `/api/checkout/verify?session_id=${session.id}`, bob)
    expect(res.status).toBe(403)
    expect((await billingState(t.h, bob.id)).plan).toBeNull()
  })
})

describe('stripe: wallet top-ups credit once, only the proven wallet', () => {
  const wallet = () => `0x${crypto.randomUUID().replace(/-/g, '')}${'ab'.repeat(4)}`

  it('10 concurrent deliveries of one paid top-up → credited once', async () => {
    const user = await newUser('TopUpRace')
    const address = wallet()
    await seedWalletSignIn(t.h, user, address)
    const paid = await paidTopUp(t, user, address, 5000)
    const event = completedEvent(t, paid.id)
    const results = await Promise.all(Array.from({ length: 10 }, () => deliver(t, event)))
    const outcomes = await Promise.all(results.map(async (r) => (expect(r.status).toBe(200), ((await r.json()) as { outcome: string }).outcome)))
    expect(outcomes.filter((o) => o === 'applied')).toHaveLength(1)
    expect(outcomes.filter((o) => o === 'duplicate')).toHaveLength(9)
    expect(await cardSessionsOf(t.h, address)).toMatchObject([{ depositAmount: '50000000' }])
    expect(await topUpRows(t.h, address)).toHaveLength(1)
  })

  it('one payment through every door (completed, async_payment_succeeded, verify, retries) → credited once', async () => {
    const user = await newUser('TopUpDoors')
    const address = wallet()
    await seedWalletSignIn(t.h, user, address)
    const paid = await paidTopUp(t, user, address, 1000)
    expect(await delivered(t, completedEvent(t, paid.id))).toBe('applied')
    expect(await delivered(t, completedEvent(t, paid.id, { type: 'checkout.session.async_payment_succeeded' }))).toBe('duplicate')
    expect(await delivered(t, completedEvent(t, paid.id, { id: `evt_retry_${crypto.randomUUID()}` }))).toBe('duplicate')
    expect((await get(t.h, `/api/checkout/verify?session_id=${paid.id}`, user)).status).toBe(200)
    expect(await cardSessionsOf(t.h, address)).toMatchObject([{ depositAmount: '10000000' }])
  })

  it('concurrent top-ups of one wallet (different payments) → one card session holding their sum', async () => {
    const user = await newUser('TopUpMany')
    const address = wallet()
    await seedWalletSignIn(t.h, user, address)
    const paid = []
    for (const amount of [500, 1000, 2500, 5000]) paid.push(await paidTopUp(t, user, address, amount))
    const results = await Promise.all(paid.map((p) => deliver(t, completedEvent(t, p.id))))
    for (const r of results) expect(r.status).toBe(200)
    const sessions = await cardSessionsOf(t.h, address)
    expect(sessions).toHaveLength(1)
    expect(sessions[0].depositAmount).toBe('90000000')
    expect(await topUpRows(t.h, address)).toHaveLength(4)
  })

  it('a forged delivery naming another wallet or a bigger amount is 400 and funds nothing', async () => {
    const user = await newUser('TopUpForge')
    const address = wallet()
    await seedWalletSignIn(t.h, user, address)
    const paid = await paidTopUp(t, user, address, 500)
    const event = completedEvent(t, paid.id)
    const object = event.data.object as { metadata: Record<string, string> }
    const attacker = wallet()
    const tampered = JSON.stringify({ ...event, data: { object: { ...object, metadata: { ...object.metadata, address: attacker, amountCents: '5000' }, amount_total: 5000 } } })
    const res = await deliver(t, event, { body: tampered })
    expect(res.status).toBe(400)
    expect(await cardSessionsOf(t.h, attacker)).toEqual([])
    expect(await cardSessionsOf(t.h, address)).toEqual([])
  })

  it("a top-up of another user's wallet is refused before Stripe is asked: 403, no checkout", async () => {
    const owner = await newUser('Owner')
    const other = await newUser('Other')
    const address = wallet()
    await seedWalletSignIn(t.h, owner, address)
    const before = t.stripe.sessions.length
    const res = await call(t.h, 'GET', `/api/wallet/top-up?amount=500&address=${address}`, { user: other })
    expect(res.status).toBe(403)
    expect(await res.json()).toEqual({ error: 'address must be your managed wallet or a wallet you signed in with', code: 'FORBIDDEN' })
    expect(t.stripe.sessions.length).toBe(before)
  })

  it("GET /api/wallet/top-ups shows only the caller's own top-ups and balances", async () => {
    const payer = await newUser('Payer')
    const other = await newUser('Nosy')
    const address = wallet()
    await seedWalletSignIn(t.h, payer, address)
    const paid = await paidTopUp(t, payer, address, 500)
    expect(await delivered(t, completedEvent(t, paid.id))).toBe('applied')
    const mine = await call(t.h, 'GET', '/api/wallet/top-ups', { user: payer })
    expect(((await mine.json()) as { topUps: unknown[] }).topUps).toHaveLength(1)
    const theirs = await call(t.h, 'GET', '/api/wallet/top-ups', { user: other })
    expect(theirs.status).toBe(200)
    expect(await theirs.json()).toEqual({ balances: [], topUps: [] })
    expect((await call(t.h, 'GET', '/api/wallet/top-ups')).status).toBe(401)
  })
})
