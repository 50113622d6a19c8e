import { underFault } from '../../support/fault-proxy'
import { eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { signDelivery } from '../../../lib/queue/sign'
import { users } from '../../../schema'
import { withinOneWindow } from '../../support/requests'
import { billingState, completedEvent, deliver, deployments, eventRows, get, startCheckout, stripeHarness, type StripeHarness } from './helpers'
import { useFixture } from '../../support/harness'
import { stripeEvent } from '../../support/stripe-server'
import { cardSessionsOf, delivered, paidTopUp, topUpRows } from './helpers'
import { seedWalletSignIn } from '../wallet/helpers'

const QUEUE_KEY = 'stripe-error-queue-key'
const t = useFixture(() => stripeHarness({ env: { QSTASH_CURRENT_SIGNING_KEY: QUEUE_KEY } }))
// Stripe not configured at all, and a plan without a price; no backend behind BACKEND_URL.
const bare = useFixture(() => stripeHarness({ stripeEnv: false, backend: false, env: { QSTASH_CURRENT_SIGNING_KEY: QUEUE_KEY, INTERNAL_API_KEY: undefined } }))
const partial = useFixture(() => stripeHarness({ env: { STRIPE_PRICE_LABEL: undefined, STRIPE_WEBHOOK_SECRET: undefined } }))

const dashboard = (path: string) => `http://localhost:3000${path}`

describe('stripe: authentication', () => {
  it('checkout and verify without a session (or with an unknown one) → 401 JSON, no Stripe call', async () => {
    const before = t.stripe.requests.length
    for (const path of ['/api/stripe/checkout?plan=solo', '/api/checkout/verify?session_id=cs_test_x']) {
      for (const cookie of [undefined, 'service-session=forged']) {
        const res = await t.h.web.request(path, { headers: cookie ? { cookie } : {} })
        expect(res.status, path).toBe(401)
        expect(await res.json()).toEqual({ error: 'Unauthorized', code: 'UNAUTHORIZED' })
      }
    }
    expect(t.stripe.requests.length).toBe(before)
  })
})

describe('stripe: every redirect of the plan checkout', () => {
  it('a missing, unknown, legacy or over-long plan → /pricing?error=invalid_plan, before the admin bypass', async () => {
    for (const query of ['', '?plan=', '?plan=gold', '?plan=pro', '?plan=SOLO', `?plan=${'x'.repeat(100)}`]) {
      for (const user of [t.h.users.alice, t.h.users.admin]) {
        const res = await get(t.h, `/api/stripe/checkout${query}`, user)
        expect(res.status, query).toBe(303)
        expect(res.headers.get('location')).toBe(dashboard('/pricing?error=invalid_plan'))
      }
    }
  })

  it('no secret key, or no price for the plan → /pricing?error=stripe_not_configured', async () => {
    const res = await get(bare.h, '/api/stripe/checkout?plan=solo', bare.h.users.alice)
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe(dashboard('/pricing?error=stripe_not_configured'))
    const before = partial.stripe.requests.length
    const label = await get(partial.h, '/api/stripe/checkout?plan=label', partial.h.users.alice)
    expect(label.headers.get('location')).toBe(dashboard('/pricing?error=stripe_not_configured'))
    expect(partial.stripe.requests.length).toBe(before)
    // The other plans of that deployment still work.
    expect((await get(partial.h, '/api/stripe/checkout?plan=solo', partial.h.users.alice)).headers.get('location')).toMatch(/^https:\/\/checkout\.stripe\.com\//)
  })

  it('Stripe unreachable, failing or refusing → /pricing?error=checkout_failed, nothing stored', async () => {
    const { alice } = t.h.users
    const before = await billingState(t.h, alice.id)
    const sessions = t.stripe.sessions.length
    for (const failure of ['unreachable', 500, 401] as const) {
      t.stripe.failAll(failure)
      const res = await get(t.h, '/api/stripe/checkout?plan=solo', alice)
      expect(res.status, String(failure)).toBe(303)
      expect(res.headers.get('location')).toBe(dashboard('/pricing?error=checkout_failed'))
    }
    t.stripe.failAll(null)
    expect(t.stripe.sessions.length).toBe(sessions)
    expect(await billingState(t.h, alice.id)).toEqual(before)
  })

  it('a subscription active or past_due → /pricing?error=already_subscribed, Stripe not called, nothing changed', async () => {
    for (const status of ['active', 'past_due'] as const) {
      const payer = await t.h.seedUser('Payer', `payer-${crypto.randomUUID().slice(0, 6)}@example.com`)
      await t.h.db.update(users).set({ plan: 'solo', subscriptionId: `sub_${status}`, subscriptionStatus: status }).where(eq(users.id, payer.id))
      const before = await billingState(t.h, payer.id)
      const requests = t.stripe.requests.length
      const res = await get(t.h, '/api/stripe/checkout?plan=collective', payer)
      expect(res.status, status).toBe(303)
      expect(res.headers.get('location')).toBe(dashboard('/pricing?error=already_subscribed'))
      expect(t.stripe.requests.length).toBe(requests)
      expect(await billingState(t.h, payer.id)).toEqual(before)
    }
  })

  it('a stored Stripe customer that Stripe does not know → checkout_failed', async () => {
    const gone = await t.h.seedUser('Gone', `gone-${crypto.randomUUID().slice(0, 6)}@example.com`)
    await t.h.db.update(users).set({ stripeCustomerId: 'cus_deleted0000' }).where(eq(users.id, gone.id))
    const res = await get(t.h, '/api/stripe/checkout?plan=solo', gone)
    expect(res.headers.get('location')).toBe(dashboard('/pricing?error=checkout_failed'))
  })
})

describe('stripe: Stripe slow or never answering (the fake behind the fault proxy)', () => {
  /** Each Stripe attempt gives up after this long (`STRIPE_TIMEOUT_MS`); the SDK retries a failed one once. */
  const TIMEOUT_MS = 300
  /** The bound on an answer: two attempts, the SDK's pause between them, and room for a loaded machine. */
  const WITHIN_MS = 2 * TIMEOUT_MS + 3000
  const slow = useFixture(() => stripeHarness({ faultProxy: true, env: { STRIPE_TIMEOUT_MS: String(TIMEOUT_MS) } }))

  /** `fn` timed while Stripe is under `fault`; Stripe passes again afterwards. */
  const whileDown = <T>(fault: 'blackhole' | { kind: 'delay'; ms: number }, fn: () => T | Promise<T>) => underFault(slow.proxy!, fault, fn)

  it.each([['blackholed', 'blackhole' as const], ['slower than the timeout', { kind: 'delay' as const, ms: 5 * TIMEOUT_MS }]])(
    'checkout while Stripe is %s → /pricing?error=checkout_failed in time, no session, nothing stored; then it checks out',
    async (_name, fault) => {
      const user = await slow.h.seedUser('Slow', `slow-${crypto.randomUUID().slice(0, 6)}@example.com`)
      const sessions = slow.stripe.sessions.length
      const { value: res, ms } = await whileDown(fault, () => get(slow.h, '/api/stripe/checkout?plan=solo', user))
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe(dashboard('/pricing?error=checkout_failed'))
      expect(ms).toBeLessThan(WITHIN_MS)
      expect(await billingState(slow.h, user.id)).toMatchObject({ plan: null, stripeCustomerId: null })
      // Nothing a later answer could complete: the abandoned attempts made no Checkout Session (blackholed) or ones nobody was sent to.
      expect(slow.stripe.sessions.filter((x) => x.client_reference_id === user.id && x.status === 'complete')).toEqual([])
      expect(slow.stripe.sessions.length).toBeGreaterThanOrEqual(sessions)
      expect(await startCheckout(slow, user, 'solo')).toMatch(/^cs_/)
    },
  )

  it('verify while Stripe is blackholed → 500 PAYMENT_PROVIDER_UNAVAILABLE in time, nothing applied; once back, verify applies it', async () => {
    const user = await slow.h.seedUser('SlowVerify', `slow-verify-${crypto.randomUUID().slice(0, 6)}@example.com`)
    const id = await startCheckout(slow, user, 'solo')
    slow.stripe.complete(id)
    const { value: res, ms } = await whileDown('blackhole', () => get(slow.h, `/api/checkout/verify?session_id=${id}`, user))
    expect(res.status).toBe(500)
    expect(await res.json()).toEqual({ error: 'Payment provider unavailable', code: 'PAYMENT_PROVIDER_UNAVAILABLE' })
    expect(ms).toBeLessThan(WITHIN_MS)
    expect(await billingState(slow.h, user.id)).toMatchObject({ plan: null, subscriptionStatus: 'inactive' })

    const back = await get(slow.h, `/api/checkout/verify?session_id=${id}`, user)
    expect(back.status).toBe(200)
    expect(await back.json()).toMatchObject({ plan: 'solo', status: 'active' })
  })
})

describe('stripe: checkout verify errors', () => {
  const verify = (h: StripeHarness, query: string, user = h.h.users.alice) => get(h.h, `/api/checkout/verify${query}`, user)

  it('a missing, empty, over-long or malformed session_id → 400 VALIDATION, no Stripe call', async () => {
    const before = t.stripe.requests.length
    for (const [query, error] of [
      ['', 'session_id required'],
      ['?session_id=', 'session_id required'],
      [`?session_id=cs_${'a'.repeat(300)}`, 'Invalid session_id'],
      ['?session_id=../v1/customers', 'Invalid session_id'],
    ]) {
      const res = await verify(t, query)
      expect(res.status, query).toBe(400)
      expect(await res.json()).toMatchObject({ error, code: 'VALIDATION' })
    }
    expect(t.stripe.requests.length).toBe(before)
  })

  it('no secret key → 503 Stripe not configured', async () => {
    const res = await verify(bare, '?session_id=cs_test_abc')
    expect(res.status).toBe(503)
    expect(await res.json()).toEqual({ error: 'Stripe not configured', code: 'NOT_CONFIGURED' })
  })

  it('a session Stripe does not know → 404 NOT_FOUND', async () => {
    const res = await verify(t, '?session_id=cs_test_unknown123')
    expect(res.status).toBe(404)
    expect(await res.json()).toEqual({ error: 'Checkout session not found', code: 'NOT_FOUND' })
  })

  it('Stripe unreachable or failing → 500 PAYMENT_PROVIDER_UNAVAILABLE, nothing changed', async () => {
    const { bob } = t.h.users
    const id = await startCheckout(t, bob, 'solo')
    t.stripe.complete(id)
    const before = await billingState(t.h, bob.id)
    for (const failure of ['unreachable', 503] as const) {
      t.stripe.failAll(failure)
      const res = await verify(t, `?session_id=${id}`, bob)
      expect(res.status).toBe(500)
      expect(await res.json()).toEqual({ error: 'Payment provider unavailable', code: 'PAYMENT_PROVIDER_UNAVAILABLE' })
    }
    t.stripe.failAll(null)
    expect(await billingState(t.h, bob.id)).toEqual(before)
    expect(t.published.filter((p) => (p.body as { userId: string }).userId === bob.id)).toEqual([])
  })

  it('a checkout not completed, or completed but unpaid (a delayed payment method) → 402, nothing applied', async () => {
    const dan = await t.h.seedUser('Dan', `dan-${crypto.randomUUID().slice(0, 6)}@example.com`)
    const open = await startCheckout(t, dan, 'solo')
    const res = await verify(t, `?session_id=${open}`, dan)
    expect(res.status).toBe(402)
    expect(await res.json()).toEqual({ error: 'Payment not completed', code: 'PAYMENT_INCOMPLETE' })
    const pending = await startCheckout(t, dan, 'solo')
    t.stripe.complete(pending, { paymentStatus: 'unpaid' })
    expect((await verify(t, `?session_id=${pending}`, dan)).status).toBe(402)
    expect(await billingState(t.h, dan.id)).toMatchObject({ plan: null, subscriptionStatus: 'inactive', stripeCustomerId: null, subscriptionId: null })
    // The webhook agrees: a completed-but-unpaid checkout changes nothing until its payment succeeds.
    const event = completedEvent(t, pending)
    const hook = await deliver(t, event)
    expect(await hook.json()).toEqual({ received: true, outcome: 'unpaid' })
    expect((await billingState(t.h, dan.id)).plan).toBeNull()
    const succeeded = completedEvent(t, pending, { type: 'checkout.session.async_payment_succeeded' })
    ;(succeeded.data.object as { payment_status: string }).payment_status = 'paid'
    expect(await (await deliver(t, succeeded)).json()).toEqual({ received: true, outcome: 'applied' })
    expect(await billingState(t.h, dan.id)).toMatchObject({ plan: 'solo', subscriptionStatus: 'active' })
  })
})

describe('stripe: expert setup checkout errors', () => {
  const date = () => new Date(Date.now() + 3 * 86_400_000).toISOString().slice(0, 10)
  const expert = (h: StripeHarness, query: string, ip = `203.0.113.${Math.floor(Math.random() * 250)}`) =>
    h.h.web.request(`/api/stripe/expert-setup-checkout${query}`, { headers: { 'cf-connecting-ip': ip } })

  it('each of date, time and email missing or invalid → 400 VALIDATION; no Checkout created', async () => {
    const sessions = t.stripe.sessions.length
    const d = date()
    const cases: Array<[string, string]> = [
      [`?time=10:00&email=a@b.co`, 'date required'],
      [`?date=${d}&email=a@b.co`, 'time required'],
      [`?date=${d}&time=10:00`, 'Email is required'],
      [`?date=2026-02-30&time=10:00&email=a@b.co`, 'Invalid date'],
      [`?date=01-06-2026&time=10:00&email=a@b.co`, 'Invalid date'],
      [`?date=2000-01-01&time=10:00&email=a@b.co`, 'Invalid date'],
      [`?date=${d}&time=24:00&email=a@b.co`, 'Invalid time'],
      [`?date=${d}&time=9:00&email=a@b.co`, 'Invalid time'],
      [`?date=${d}&time=10:00&email=not-an-email`, 'Invalid email'],
    ]
    for (const [query, error] of cases) {
      const res = await expert(t, query)
      expect(res.status, query).toBe(400)
      expect(await res.json(), query).toMatchObject({ error, code: 'VALIDATION' })
    }
    expect(t.stripe.sessions.length).toBe(sessions)
  })

  it('not configured → 500 MISCONFIGURED; Stripe failing → 500 PAYMENT_PROVIDER_UNAVAILABLE', async () => {
    const q = `?date=${date()}&time=10:00&email=a@b.co`
    const res = await expert(bare, q)
    expect(res.status).toBe(500)
    expect(await res.json()).toEqual({ error: 'Stripe not configured', code: 'MISCONFIGURED' })
    t.stripe.failAll('unreachable')
    const down = await expert(t, q)
    t.stripe.failAll(null)
    expect(down.status).toBe(500)
    expect(await down.json()).toEqual({ error: 'Payment provider unavailable', code: 'PAYMENT_PROVIDER_UNAVAILABLE' })
  })

  it('10 per minute per client address, then 429 with Retry-After', async () => {
    const q = `?date=${date()}&time=10:00&email=a@b.co`
    const ip = '198.51.100.77'
    await withinOneWindow(60)
    for (let i = 0; i < 10; i++) expect((await expert(t, q, ip)).status).toBe(200)
    const res = await expert(t, q, ip)
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after')).toBeTruthy()
    expect(await res.json()).toEqual({ error: 'Too many requests', code: 'RATE_LIMITED' })
    expect((await expert(t, q, '198.51.100.78')).status).toBe(200)
  })
})

describe('stripe: webhook and deploy receiver errors', () => {
  it('no endpoint secret → 503 NOT_CONFIGURED, nothing recorded', async () => {
    const res = await deliver(partial, { id: 'evt_x', object: 'event', type: 'invoice.paid', created: 1, data: { object: {} } }, { secret: 'whsec_any' })
    expect(res.status).toBe(503)
    expect(await res.json()).toEqual({ error: 'Stripe webhook not configured', code: 'NOT_CONFIGURED' })
    expect(await eventRows(partial.h)).toEqual([])
  })

  const receive = async (h: StripeHarness, job: Record<string, unknown>) => {
    const body = JSON.stringify(job)
    const url = 'http://127.0.0.1:8787/api/queue/subscription-deploy'
    return h.h.web.request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'upstash-signature': await signDelivery(QUEUE_KEY, url, body) }, body })
  }
  const job = () => ({ tier: 'solo', stripeCustomerId: `cus_${crypto.randomUUID().replaceAll('-', '')}`, subscriptionId: null, userId: 'u1' })

  it('deploy receiver: BACKEND_URL or INTERNAL_API_KEY unset → 503 (the queue retries)', async () => {
    const res = await receive(bare, job())
    expect(res.status).toBe(503)
    expect(await res.json()).toEqual({ error: 'Backend not configured', code: 'NOT_CONFIGURED' })
  })

  it('deploy receiver: the backend unreachable → 502 BACKEND_UNAVAILABLE; a permanent 4xx refusal → 200 deployed: false', async () => {
    const closed = await stripeHarness({ env: { QSTASH_CURRENT_SIGNING_KEY: QUEUE_KEY, BACKEND_URL: 'http://127.0.0.1:9' } })
    try {
      const res = await receive(closed, job())
      expect(res.status).toBe(502)
      expect(await res.json()).toEqual({ error: 'Backend unavailable', code: 'BACKEND_UNAVAILABLE' })
    } finally {
      await closed.close()
    }
    // The real backend refuses a customer id that is not Stripe's shape (400): retrying cannot help.
    const refused = { ...job(), stripeCustomerId: 'cus_not-a-stripe-id' }
    const res = await receive(t, refused)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ ok: true, deployed: false })
    expect(await deployments(t.h, refused.stripeCustomerId)).toEqual([])
  })

  it('deploy receiver: the backend answering 408 or 429 → 502 BACKEND_UNAVAILABLE (retried, not dropped); the retry deploys', async () => {
    const retried = job()
    for (const status of [408, 429]) {
      t.backendAnswers(status)
      const res = await receive(t, retried)
      expect(res.status, String(status)).toBe(502)
      expect(await res.json()).toEqual({ error: 'Backend unavailable', code: 'BACKEND_UNAVAILABLE' })
    }
    expect(await deployments(t.h, retried.stripeCustomerId)).toEqual([])
    const res = await receive(t, retried)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ ok: true, deployed: true })
    expect(await deployments(t.h, retried.stripeCustomerId)).toHaveLength(1)
  })

  it('deploy receiver: an invalid job body → 400 VALIDATION, the backend not called', async () => {
    const res = await receive(t, { ...job(), tier: 'enterprise' })
    expect(res.status).toBe(400)
    expect((await res.json()).code).toBe('VALIDATION')
  })

})

describe('stripe: wallet top-ups that fund nothing', () => {
  const wallet = () => `0x${crypto.randomUUID().replace(/-/g, '')}${'cd'.repeat(4)}`
  const newUser = (name: string) => t.h.seedUser(name, `${name.toLowerCase()}-${crypto.randomUUID().slice(0, 6)}@example.com`)

  it('not paid yet → `unpaid`; its later payment credits it once', async () => {
    const user = await newUser('Slow')
    const address = wallet()
    await seedWalletSignIn(t.h, user, address)
    const pending = await paidTopUp(t, user, address, 1000)
    const unpaid = stripeEvent('checkout.session.completed', { ...pending, payment_status: 'unpaid' })
    expect(await delivered(t, unpaid)).toBe('unpaid')
    expect(await cardSessionsOf(t.h, address)).toEqual([])
    expect(await delivered(t, completedEvent(t, pending.id, { type: 'checkout.session.async_payment_succeeded' }))).toBe('applied')
    expect(await cardSessionsOf(t.h, address)).toMatchObject([{ depositAmount: '10000000' }])
  })

  it('metadata this service never writes → `invalid`, nothing funded: an amount not offered or not what was charged, a bad wallet, another currency', async () => {
    const user = await newUser('Odd')
    const address = wallet()
    await seedWalletSignIn(t.h, user, address)
    const paid = await paidTopUp(t, user, address, 1000)
    for (const patch of [
      { metadata: { ...paid.metadata, amountCents: '2500' } },
      { metadata: { ...paid.metadata, amountCents: '1234' }, amount_total: 1234 },
      { metadata: { ...paid.metadata, address: '0x1234' } },
      { currency: 'gbp' },
    ]) {
      const event = stripeEvent('checkout.session.completed', { ...paid, ...patch, id: `cs_odd_${crypto.randomUUID()}` })
      expect(await delivered(t, event)).toBe('invalid')
    }
    expect(await cardSessionsOf(t.h, address)).toEqual([])
    expect(await topUpRows(t.h, address)).toEqual([])
  })

  it('an unknown user → `unknown_user`, nothing funded', async () => {
    const address = wallet()
    const event = stripeEvent('checkout.session.completed', {
      id: `cs_ghost_${crypto.randomUUID()}`,
      object: 'checkout.session',
      mode: 'payment',
      status: 'complete',
      payment_status: 'paid',
      amount_total: 500,
      currency: 'usd',
      client_reference_id: 'no-such-user',
      metadata: { kind: 'wallet-top-up', userId: 'no-such-user', address, amountCents: '500' },
    })
    expect(await delivered(t, event)).toBe('unknown_user')
    expect(await cardSessionsOf(t.h, address)).toEqual([])
  })
})
