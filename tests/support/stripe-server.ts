import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import Stripe from 'stripe'
import { listen } from './loopback'

/**
 * A stand-in for the Stripe API (a third-party API with no local peer) on loopback, for the calls this project
 * makes with the real SDK (`STRIPE_API_URL` points `stripeClient` here). Shapes follow Stripe's API reference at
 * the SDK's pinned version (stripe 23): form-encoded bodies with bracket keys (`line_items[0][price]`,
 * `metadata[kind]`), `Authorization: Bearer sk_test_...`, JSON objects with `object`, ids with Stripe's prefixes,
 * unix-second timestamps, errors as `{error: {type, code, message, param}}` with Stripe's statuses
 * (401 bad key, 400 invalid request, 404 `resource_missing`), `Idempotency-Key` replays the first answer,
 * `expand[]` on retrieve.
 *
 * Endpoints: `POST /v1/checkout/sessions`, `GET /v1/checkout/sessions/:id` (`expand[]=subscription`,
 * `expand[]=line_items`), `GET /v1/checkout/sessions/:id/line_items`, `GET /v1/subscriptions/:id`,
 * `GET /v1/customers/:id`.
 *
 * Prices (GBP, minor units): plans solo 2900, collective 6900, label 14900, network 49900 per month; credit packs
 * 50 → 500 (£5), 200 → 1500 (£15), 500 → 3000 (£30); expert setup 4900 (£49) one-time.
 * A line item may instead carry an inline one-time `price_data` (`currency`, `unit_amount`, `product_data[name]`).
 * As on Stripe, a subscription checkout with a trial has nothing due today: its `amount_total` (and
 * `amount_subtotal`) is 0 and `complete()` makes it `no_payment_required`; the plan's price is on its
 * line item (`expand[]=line_items`) and on the subscription's item.
 */

export const PRICE_IDS = {
  STRIPE_PRICE_SOLO: 'price_test_solo_monthly',
  STRIPE_PRICE_COLLECTIVE: 'price_test_collective_monthly',
  STRIPE_PRICE_LABEL: 'price_test_label_monthly',
  STRIPE_PRICE_NETWORK: 'price_test_network_monthly',
  STRIPE_PRICE_CREDITS_50: 'price_test_credits_50',
  STRIPE_PRICE_CREDITS_200: 'price_test_credits_200',
  STRIPE_PRICE_CREDITS_500: 'price_test_credits_500',
  STRIPE_PRICE_EXPERT_SETUP: 'price_test_expert_setup',
} as const

/** Price id → amount (GBP minor units) and whether it recurs monthly. */
export const PRICES: Record<string, { unit_amount: number; currency: string; recurring: boolean; nickname: string }> = {
  [PRICE_IDS.STRIPE_PRICE_SOLO]: { unit_amount: 2900, currency: 'gbp', recurring: true, nickname: 'solo' },
  [PRICE_IDS.STRIPE_PRICE_COLLECTIVE]: { unit_amount: 6900, currency: 'gbp', recurring: true, nickname: 'collective' },
  [PRICE_IDS.STRIPE_PRICE_LABEL]: { unit_amount: 14900, currency: 'gbp', recurring: true, nickname: 'label' },
  [PRICE_IDS.STRIPE_PRICE_NETWORK]: { unit_amount: 49900, currency: 'gbp', recurring: true, nickname: 'network' },
  [PRICE_IDS.STRIPE_PRICE_CREDITS_50]: { unit_amount: 500, currency: 'gbp', recurring: false, nickname: 'credits 50' },
  [PRICE_IDS.STRIPE_PRICE_CREDITS_200]: { unit_amount: 1500, currency: 'gbp', recurring: false, nickname: 'credits 200' },
  [PRICE_IDS.STRIPE_PRICE_CREDITS_500]: { unit_amount: 3000, currency: 'gbp', recurring: false, nickname: 'credits 500' },
  [PRICE_IDS.STRIPE_PRICE_EXPERT_SETUP]: { unit_amount: 4900, currency: 'gbp', recurring: false, nickname: 'expert setup' },
}

export const API_VERSION = Stripe.API_VERSION

type Json = Record<string, unknown>
/** A form body decoded the way Stripe reads it: `a[b][0][c]=v` → `{a: {b: [{c: 'v'}]}}`. */
type Form = { [k: string]: string | Form | Form[] | string[] }

export interface CheckoutSession {
  id: string
  object: 'checkout.session'
  mode: 'payment' | 'subscription' | 'setup'
  status: 'open' | 'complete' | 'expired'
  payment_status: 'paid' | 'unpaid' | 'no_payment_required'
  url: string | null
  client_reference_id: string | null
  customer: string | null
  customer_email: string | null
  customer_details: { email: string | null } | null
  metadata: Record<string, string>
  amount_subtotal: number
  amount_total: number
  currency: string
  subscription: string | null
  payment_intent: string | null
  success_url: string | null
  cancel_url: string | null
  created: number
  expires_at: number
  livemode: false
  [k: string]: unknown
}

export interface StripeSubscription {
  id: string
  object: 'subscription'
  customer: string
  status: 'trialing' | 'active' | 'past_due' | 'unpaid' | 'canceled' | 'incomplete' | 'incomplete_expired' | 'paused'
  metadata: Record<string, string>
  items: { object: 'list'; data: Json[]; has_more: false; url: string }
  trial_start: number | null
  trial_end: number | null
  cancel_at_period_end: boolean
  canceled_at: number | null
  created: number
  currency: string
  livemode: false
  [k: string]: unknown
}

interface StoredSession {
  session: CheckoutSession
  lineItems: Array<{ price: string; quantity: number }>
  trialDays: number | null
  subscriptionMetadata: Record<string, string>
}

const now = () => Math.floor(Date.now() / 1000)
const DAY = 86_400
const MONTH = 30 * DAY
const randomId = (prefix: string) => `${prefix}${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`

/** Decodes Stripe's form encoding (qs style, indexed arrays) into nested objects and arrays. */
export function decodeForm(raw: string): Form {
  const root: Form = {}
  for (const [key, value] of new URLSearchParams(raw)) {
    const parts = key.split(/\[|\]\[|\]/).filter((p, i) => i === 0 || p !== '')
    let node: Record<string, unknown> = root
    parts.forEach((part, i) => {
      const last = i === parts.length - 1
      if (last) {
        node[part] = value
        return
      }
      const nextIsIndex = /^\d+$/.test(parts[i + 1])
      node[part] ??= nextIsIndex ? [] : {}
      node = node[part] as Record<string, unknown>
    })
  }
  return root
}

class StripeFailure extends Error {
  constructor(
    readonly status: number,
    readonly body: { type: string; message: string; code?: string; param?: string },
  ) {
    super(body.message)
  }
}

const invalid = (message: string, param?: string, code?: string) =>
  new StripeFailure(400, { type: 'invalid_request_error', message, ...(param && { param }), ...(code && { code }) })
const missing = (kind: string, id: string, param: string) =>
  new StripeFailure(404, { type: 'invalid_request_error', code: 'resource_missing', message: `No such ${kind}: '${id}'`, param })

export interface CompleteOptions {
  /** Override what the payment produced; default: `no_payment_required` for a trial subscription, else `paid`. */
  paymentStatus?: 'paid' | 'unpaid' | 'no_payment_required'
  /** The customer Checkout attaches; default the session's customer, or a new `cus_...` (subscriptions always get one). */
  customer?: string
  /** For `mode: 'payment'`, create a customer as `customer_creation: 'always'` would (default: only when the session named one). */
  createCustomer?: boolean
}

export type Failure = number | 'unreachable'

export async function startStripeServer(opts: { secretKey?: string; webhookSecret?: string } = {}) {
  const secretKey = opts.secretKey ?? `sk_test_${crypto.randomUUID().replaceAll('-', '')}`
  const webhookSecret = opts.webhookSecret ?? `whsec_${crypto.randomUUID().replaceAll('-', '')}`
  const stored = new Map<string, StoredSession>()
  const subscriptions = new Map<string, StripeSubscription>()
  const customers = new Map<string, Json>()
  // The configured prices, plus one-time prices made inline by `line_items[i][price_data]` (as Stripe does).
  const prices = { ...PRICES }
  const idempotent = new Map<string, { status: number; body: string }>()
  /** Every request received, in order (path without query; the decoded form or query). */
  const requests: Array<{ method: string; path: string; params: Form; idempotencyKey?: string }> = []
  const failures: Failure[] = []
  let failAlways: Failure | null = null

  function addCustomer(id = randomId('cus_'), email: string | null = null) {
    customers.set(id, { id, object: 'customer', email, created: now(), livemode: false, metadata: {} })
    return id
  }

  function createSession(form: Form): CheckoutSession {
    const mode = form.mode as string | undefined
    if (!mode) throw invalid('Missing required param: mode.', 'mode', 'parameter_missing')
    if (!['payment', 'subscription', 'setup'].includes(mode)) throw invalid(`Invalid mode: must be one of payment, setup, or subscription`, 'mode')
    const items = (form.line_items as Form[] | undefined) ?? []
    if (mode !== 'setup' && items.length === 0) throw invalid('You must specify either `line_items` or `mode` `setup`.', 'line_items', 'parameter_missing')
    const lineItems = items.map((item, i) => {
      const price = (item.price as string | undefined) ?? (item.price_data ? inlinePrice(item.price_data as Form, i) : undefined)
      if (!price) throw invalid('Missing required param: line_items[0][price].', `line_items[${i}][price]`, 'parameter_missing')
      if (!prices[price]) throw missing('price', price, `line_items[${i}][price]`)
      return { price, quantity: Number(item.quantity ?? 1) }
    })
    const recurring = lineItems.some((l) => prices[l.price].recurring)
    if (mode === 'subscription' && !recurring) {
      throw invalid('You must provide at least one recurring price in `subscription` mode when using prices.', 'line_items')
    }
    if (mode === 'payment' && recurring) {
      throw invalid('You specified `payment` mode but passed a recurring price. Either switch to `subscription` mode or use only one-time prices.', 'line_items')
    }
    if (form.customer && form.customer_email) throw invalid('You may only specify one of these parameters: customer, customer_email.', 'customer')
    const customer = (form.customer as string | undefined) ?? null
    if (customer && !customers.has(customer)) throw missing('customer', customer, 'customer')
    const subscriptionData = (form.subscription_data as Form | undefined) ?? {}
    if (mode !== 'subscription' && form.subscription_data) throw invalid('`subscription_data` can only be used in `subscription` mode.', 'subscription_data')
    const trialDays = subscriptionData.trial_period_days ? Number(subscriptionData.trial_period_days) : null
    if (trialDays !== null && !(trialDays >= 1 && trialDays <= 730)) throw invalid('Invalid trial_period_days', 'subscription_data[trial_period_days]')
    const metadata = (form.metadata as Record<string, string> | undefined) ?? {}
    if (Object.keys(metadata).length > 50) throw invalid('Metadata can have at most 50 keys.', 'metadata')
    const total = lineItems.reduce((sum, l) => sum + prices[l.price].unit_amount * l.quantity, 0)
    // A trial subscription has nothing due today.
    const dueNow = mode === 'subscription' && trialDays ? 0 : total
    const id = randomId('cs_test_')
    const created = now()
    const customerEmail = (form.customer_email as string | undefined) ?? null
    const session: CheckoutSession = {
      id,
      object: 'checkout.session',
      mode: mode as CheckoutSession['mode'],
      status: 'open',
      payment_status: 'unpaid',
      url: `https://checkout.stripe.com/c/pay/${id}`,
      client_reference_id: (form.client_reference_id as string | undefined) ?? null,
      customer,
      customer_email: customerEmail,
      customer_details: null,
      metadata,
      amount_subtotal: dueNow,
      amount_total: dueNow,
      currency: prices[lineItems[0].price].currency,
      subscription: null,
      payment_intent: null,
      success_url: (form.success_url as string | undefined) ?? null,
      cancel_url: (form.cancel_url as string | undefined) ?? null,
      created,
      expires_at: created + DAY,
      livemode: false,
    }
    stored.set(id, { session, lineItems, trialDays, subscriptionMetadata: (subscriptionData.metadata as Record<string, string> | undefined) ?? {} })
    return session
  }

  /** `price_data` `{currency, unit_amount, product_data: {name}}` (one-time only) as a new price id. */
  function inlinePrice(data: Form, i: number) {
    const amount = Number(data.unit_amount)
    const name = (data.product_data as Form | undefined)?.name as string | undefined
    if (!data.currency) throw invalid('Missing required param: line_items[0][price_data][currency].', `line_items[${i}][price_data][currency]`, 'parameter_missing')
    if (!Number.isInteger(amount) || amount < 0) throw invalid('Invalid integer: unit_amount', `line_items[${i}][price_data][unit_amount]`)
    if (!name) throw invalid('Missing required param: line_items[0][price_data][product_data][name].', `line_items[${i}][price_data][product_data]`, 'parameter_missing')
    if (data.recurring) throw invalid('price_data with recurring is not supported by this fake.', `line_items[${i}][price_data][recurring]`)
    const id = randomId('price_')
    prices[id] = { unit_amount: amount, currency: data.currency as string, recurring: false, nickname: name }
    return id
  }

  function lineItemList(s: StoredSession) {
    return {
      object: 'list',
      url: `/v1/checkout/sessions/${s.session.id}/line_items`,
      has_more: false,
      data: s.lineItems.map((l) => {
        const p = prices[l.price]
        const amount = s.session.mode === 'subscription' && s.trialDays ? 0 : p.unit_amount * l.quantity
        return {
          id: randomId('li_'),
          object: 'item',
          amount_subtotal: amount,
          amount_total: amount,
          currency: p.currency,
          description: p.nickname,
          quantity: l.quantity,
          price: priceObject(l.price),
        }
      }),
    }
  }

  function priceObject(id: string) {
    const p = prices[id]
    return {
      id,
      object: 'price',
      active: true,
      currency: p.currency,
      nickname: p.nickname,
      unit_amount: p.unit_amount,
      type: p.recurring ? 'recurring' : 'one_time',
      recurring: p.recurring ? { interval: 'month', interval_count: 1, usage_type: 'licensed' } : null,
      livemode: false,
    }
  }

  /** Marks a session paid and complete as Checkout would after the buyer pays (or starts a trial). */
  function complete(id: string, o: CompleteOptions = {}): CheckoutSession {
    const s = stored.get(id)
    if (!s) throw new Error(`stripe-server: no checkout session ${id}`)
    const session = s.session
    const email = session.customer_email ?? (session.customer ? ((customers.get(session.customer)?.email as string | null) ?? null) : null) ?? 'buyer@example.com'
    const wantsCustomer = session.mode === 'subscription' || o.createCustomer || !!o.customer || !!session.customer
    const customer = o.customer ?? session.customer ?? (wantsCustomer ? addCustomer(undefined, email) : null)
    if (customer && !customers.has(customer)) addCustomer(customer, email)
    session.customer = customer
    session.customer_details = { email }
    session.status = 'complete'
    session.url = null
    if (session.mode === 'subscription') {
      const sub = createSubscription(customer!, s)
      session.subscription = sub.id
      session.payment_status = o.paymentStatus ?? (s.trialDays ? 'no_payment_required' : 'paid')
    } else {
      session.payment_status = o.paymentStatus ?? 'paid'
      session.payment_intent = session.payment_status === 'paid' ? randomId('pi_') : null
    }
    return session
  }

  function createSubscription(customer: string, s: StoredSession): StripeSubscription {
    const start = now()
    const trialEnd = s.trialDays ? start + s.trialDays * DAY : null
    const periodEnd = trialEnd ?? start + MONTH
    const id = randomId('sub_')
    const sub: StripeSubscription = {
      id,
      object: 'subscription',
      customer,
      status: trialEnd ? 'trialing' : 'active',
      metadata: s.subscriptionMetadata,
      items: {
        object: 'list',
        has_more: false,
        url: `/v1/subscription_items?subscription=${id}`,
        data: s.lineItems.map((l) => ({
          id: randomId('si_'),
          object: 'subscription_item',
          price: priceObject(l.price),
          quantity: l.quantity,
          subscription: id,
          current_period_start: start,
          current_period_end: periodEnd,
          created: start,
          metadata: {},
        })),
      },
      trial_start: trialEnd ? start : null,
      trial_end: trialEnd,
      cancel_at_period_end: false,
      canceled_at: null,
      start_date: start,
      billing_cycle_anchor: periodEnd,
      created: start,
      currency: prices[s.lineItems[0].price].currency,
      livemode: false,
    }
    subscriptions.set(id, sub)
    return sub
  }

  function retrieveSession(id: string, expand: string[]) {
    const s = stored.get(id)
    if (!s) throw missing('checkout.session', id, 'session')
    const out: Json = { ...s.session }
    if (expand.includes('subscription') && s.session.subscription) out.subscription = subscriptions.get(s.session.subscription)
    if (expand.includes('customer') && s.session.customer) out.customer = customers.get(s.session.customer)
    if (expand.includes('line_items')) out.line_items = lineItemList(s)
    return out
  }

  function route(method: string, path: string, params: Form): Json {
    const expand = ((params.expand as string[] | undefined) ?? []).map(String)
    let m: RegExpExecArray | null
    if (method === 'POST' && path === '/v1/checkout/sessions') return createSession(params) as unknown as Json
    if (method === 'GET' && (m = /^\/v1\/checkout\/sessions\/([^/]+)\/line_items$/.exec(path))) {
      const s = stored.get(decodeURIComponent(m[1]))
      if (!s) throw missing('checkout.session', decodeURIComponent(m[1]), 'session')
      return lineItemList(s)
    }
    if (method === 'GET' && (m = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(path))) return retrieveSession(decodeURIComponent(m[1]), expand)
    if (method === 'GET' && (m = /^\/v1\/subscriptions\/([^/]+)$/.exec(path))) {
      const sub = subscriptions.get(decodeURIComponent(m[1]))
      if (!sub) throw missing('subscription', decodeURIComponent(m[1]), 'id')
      return sub as unknown as Json
    }
    if (method === 'GET' && (m = /^\/v1\/customers\/([^/]+)$/.exec(path))) {
      const c = customers.get(decodeURIComponent(m[1]))
      if (!c) throw missing('customer', decodeURIComponent(m[1]), 'id')
      return c
    }
    throw new StripeFailure(404, { type: 'invalid_request_error', message: `Unrecognized request URL (${method}: ${path}).` })
  }

  function send(res: ServerResponse, status: number, body: string) {
    res.writeHead(status, { 'content-type': 'application/json', 'request-id': randomId('req_'), 'stripe-version': API_VERSION })
    res.end(body)
  }

  function handle(req: IncomingMessage, res: ServerResponse, raw: string) {
    const url = new URL(req.url ?? '/', 'http://stripe.local')
    const method = req.method ?? 'GET'
    const params = decodeForm(method === 'GET' || method === 'DELETE' ? url.search.slice(1) : raw)
    const idempotencyKey = (req.headers['idempotency-key'] as string | undefined) ?? undefined
    requests.push({ method, path: url.pathname, params, ...(idempotencyKey && { idempotencyKey }) })

    const failure = failures.length ? failures.shift()! : failAlways
    if (failure === 'unreachable') {
      req.socket.destroy()
      return
    }
    if (typeof failure === 'number') {
      const type = failure >= 500 ? 'api_error' : failure === 429 ? 'invalid_request_error' : 'invalid_request_error'
      return send(res, failure, JSON.stringify({ error: { type, message: `Simulated failure (${failure})` } }))
    }

    const auth = req.headers.authorization ?? ''
    if (auth !== `Bearer ${secretKey}`) {
      const shown = auth.replace(/^Bearer /, '')
      return send(res, 401, JSON.stringify({ error: { type: 'invalid_request_error', message: `Invalid API Key provided: ${shown.slice(0, 8)}****${shown.slice(-4)}` } }))
    }
    if (method === 'POST' && idempotencyKey) {
      const seen = idempotent.get(idempotencyKey)
      if (seen) return send(res, seen.status, seen.body)
    }
    let status = 200
    let body: string
    try {
      body = JSON.stringify(route(method, url.pathname, params))
    } catch (e) {
      if (!(e instanceof StripeFailure)) throw e
      status = e.status
      body = JSON.stringify({ error: { ...e.body, request_log_url: null } })
    }
    if (method === 'POST' && idempotencyKey) idempotent.set(idempotencyKey, { status, body })
    send(res, status, body)
  }

  const server = createServer((req, res) => {
    let raw = ''
    req.setEncoding('utf8')
    req.on('data', (c: string) => (raw += c))
    req.on('end', () => {
      try {
        handle(req, res, raw)
      } catch (e) {
        send(res, 500, JSON.stringify({ error: { type: 'api_error', message: String(e) } }))
      }
    })
  })
  const loopback = await listen(server)

  return {
    url: loopback.url,
    secretKey,
    webhookSecret,
    /** Checkout Sessions created, in order (the live objects: `complete()` changes them). */
    get sessions(): CheckoutSession[] {
      return [...stored.values()].map((s) => s.session)
    },
    /** A session by id, with what was asked for it: line items (price ids), trial days, subscription metadata. */
    session(id: string) {
      const s = stored.get(id)
      return s && { ...s.session, lineItems: s.lineItems, trialDays: s.trialDays, subscriptionMetadata: s.subscriptionMetadata }
    },
    subscriptions,
    customers,
    requests,
    addCustomer,
    complete,
    /** The next `times` requests fail with `status` (an HTTP status with a Stripe error body) or `'unreachable'` (connection dropped). */
    failNext(failure: Failure, times = 1) {
      for (let i = 0; i < times; i++) failures.push(failure)
    },
    /** Every request fails this way until `failAll(null)`. */
    failAll(failure: Failure | null) {
      failAlways = failure
      if (failure === null) failures.length = 0
    },
    /**
     * An invoice of subscription `id` as Stripe (API 2025-03-31 on) shapes it: `parent.subscription_details`
     * names the subscription and carries its metadata, one line for the next period. `paid` false: a failed payment.
     */
    invoiceFor(id: string, o: { paid?: boolean } = {}) {
      const sub = subscriptions.get(id)
      if (!sub) throw new Error(`stripe-server: no subscription ${id}`)
      const item = sub.items.data[0] as { price: { id: string; unit_amount: number }; current_period_start: number; current_period_end: number }
      const paid = o.paid ?? true
      return {
        id: randomId('in_'),
        object: 'invoice' as const,
        customer: sub.customer,
        currency: sub.currency,
        status: paid ? 'paid' : 'open',
        amount_due: item.price.unit_amount,
        amount_paid: paid ? item.price.unit_amount : 0,
        amount_remaining: paid ? 0 : item.price.unit_amount,
        attempt_count: 1,
        billing_reason: 'subscription_cycle',
        created: now(),
        livemode: false as const,
        parent: { type: 'subscription_details', quote_details: null, subscription_details: { subscription: sub.id, metadata: sub.metadata } },
        lines: {
          object: 'list' as const,
          has_more: false,
          url: `/v1/invoices/lines`,
          data: [
            {
              id: randomId('il_'),
              object: 'line_item',
              amount: item.price.unit_amount,
              currency: sub.currency,
              period: { start: item.current_period_end, end: item.current_period_end + MONTH },
              pricing: { type: 'price_details', price_details: { price: item.price.id, product: 'prod_test' }, unit_amount_decimal: String(item.price.unit_amount) },
              quantity: 1,
            },
          ],
        },
      }
    },
    /** A Stripe event envelope around `object`, as Stripe delivers it to a webhook endpoint. */
    event: stripeEvent,
    close: loopback.close,
  }
}

export type StripeServer = Awaited<ReturnType<typeof startStripeServer>>

/** The harness env for a Stripe account served by `server`: keys, API URL and every price id. */
export function stripeEnv(server: Pick<StripeServer, 'url' | 'secretKey' | 'webhookSecret'>): Record<string, string> {
  return {
    STRIPE_SECRET_KEY: server.secretKey,
    STRIPE_WEBHOOK_SECRET: server.webhookSecret,
    STRIPE_API_URL: server.url,
    ...PRICE_IDS,
  }
}

/**
 * An event as Stripe sends it (`POST` to the webhook endpoint): `{id: 'evt_...', object: 'event', api_version,
 * created, data: {object, previous_attributes?}, livemode, pending_webhooks, request, type}`.
 */
export function stripeEvent(type: string, object: unknown, opts: { id?: string; created?: number; previousAttributes?: Json } = {}) {
  return {
    id: opts.id ?? randomId('evt_test_'),
    object: 'event' as const,
    api_version: API_VERSION,
    created: opts.created ?? now(),
    data: { object, ...(opts.previousAttributes && { previous_attributes: opts.previousAttributes }) },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  }
}

/**
 * A signed webhook delivery of `event`: the exact body and its `Stripe-Signature` header, made by the real SDK's
 * `generateTestHeaderString` (`timestamp` in unix seconds, default now: an old one makes a stale delivery).
 */
export function signedEvent(secret: string, event: unknown, opts: { timestamp?: number } = {}) {
  const payload = typeof event === 'string' ? event : JSON.stringify(event)
  const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret, ...(opts.timestamp !== undefined && { timestamp: opts.timestamp }) })
  return { payload, signature, headers: { 'content-type': 'application/json', 'stripe-signature': signature } }
}
