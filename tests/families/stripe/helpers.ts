import { and, eq } from 'drizzle-orm'
import { expect } from 'vitest'
import type { LocalQueue } from '../../../infra/local-queue'
import type { PublishOptions } from '../../../lib/context'
import { creditPurchases, paymentSessions, stripeEvents, subscriptionDeployments, users, walletTopUps } from '../../../schema'
import { BROWSER, createHarness, type Harness, type SeededUser } from '../../support/harness'
import { startFaultProxy } from '../../support/fault-proxy'
import { serveFetch } from '../../support/loopback'
import { call, freshIp } from '../../support/requests'
import { signedEvent, startStripeServer, stripeEnv, stripeEvent, type StripeServer } from '../../support/stripe-server'

export const INTERNAL_KEY = 'stripe-family-internal-key'

/** A queue publish the app made: what, where, with which options. */
export interface Published {
  path: string
  body: unknown
  opts?: PublishOptions
}

/**
 * The harness with a Stripe account on the fake Stripe API, and the backend served on a real port (BACKEND_URL),
 * so a queued subscription deploy reaches `POST /api/subscriptions/deploy` for real. The queue is tapped: its
 * publishes are recorded, and `failPublishes(n)` makes the next n throw (a queue outage).
 */
export async function stripeHarness(opts: { env?: Record<string, string | undefined>; stripeEnv?: boolean; backend?: boolean; faultProxy?: boolean } = {}) {
  const stripe = await startStripeServer()
  // With `faultProxy`, the SDK reaches the fake through the fault proxy (tests/support/fault-proxy.ts): `proxy.set(...)`.
  const proxy = opts.faultProxy ? await startFaultProxy({ target: stripe.url, mode: 'http' }) : undefined
  // The backend's port is needed in the env before the harness (and so its backend app) exists.
  let backendFetch: (req: Request) => Response | Promise<Response> = () => new Response('not ready', { status: 503 })
  const backendServer = opts.backend === false ? undefined : await serveFetch((req) => backendFetch(req))
  const h = await createHarness({
    env: {
      ...(opts.stripeEnv === false ? {} : stripeEnv(stripe)),
      ...(proxy && { STRIPE_API_URL: proxy.url }),
      INTERNAL_API_KEY: INTERNAL_KEY,
      BACKEND_URL: backendServer?.url,
      ...opts.env,
    },
  })
  // What the edge in front of the backend answers instead of it (a gateway timeout, its rate limit), once each.
  const edgeAnswers: number[] = []
  backendFetch = (req) => {
    const status = edgeAnswers.shift()
    return status ? new Response(null, { status }) : h.backend.fetch(req)
  }

  const queue = h.services.queue
  const publish = queue.publish.bind(queue)
  const published: Published[] = []
  let failing = 0
  queue.publish = async (path, body, o) => {
    if (failing > 0) {
      failing--
      throw new Error('queue unavailable')
    }
    published.push({ path, body, opts: o })
    return publish(path, body, o)
  }

  return {
    h,
    stripe,
    proxy,
    published,
    failPublishes(n = 1) {
      failing = n
    },
    /** The next backend requests are answered with these statuses (one each) before reaching the backend. */
    backendAnswers(...statuses: number[]) {
      edgeAnswers.push(...statuses)
    },
    /** Resolves once every queued delivery has been made (the deploy receiver has answered). */
    idle: () => (queue as LocalQueue).idle(),
    async close() {
      await h.close()
      await proxy?.close()
      await stripe.close()
      await backendServer?.close()
    },
  }
}

export type StripeHarness = Awaited<ReturnType<typeof stripeHarness>>

/** `GET` as the dashboard's browser does, with the user's session when given. */
export const get = (h: Harness, path: string, user?: SeededUser) =>
  h.web.request(path, { headers: { ...BROWSER, ...(user && { cookie: user.cookie }) } })

/** A signed webhook delivery of `event` (by default signed now with the account's endpoint secret). */
export function deliver(t: StripeHarness, event: unknown, o: { secret?: string; timestamp?: number; headers?: Record<string, string>; body?: string } = {}) {
  const signed = signedEvent(o.secret ?? t.stripe.webhookSecret, event, { timestamp: o.timestamp })
  return t.h.web.request('/api/stripe/webhook', { method: 'POST', headers: { ...signed.headers, ...o.headers }, body: o.body ?? signed.payload })
}

/** A delivery answered 200: the outcome the service recorded. */
export async function delivered(t: StripeHarness, event: unknown): Promise<string> {
  const res = await deliver(t, event)
  const body = (await res.json()) as { outcome: string }
  expect(res.status, JSON.stringify(body)).toBe(200)
  return body.outcome
}

/** The plan checkout as the dashboard starts it: 303 to Stripe's page; answers the created session's id. */
export async function startCheckout(t: StripeHarness, user: SeededUser, plan = 'solo'): Promise<string> {
  const res = await get(t.h, `/api/stripe/checkout?plan=${plan}`, user)
  expect(res.status).toBe(303)
  const location = res.headers.get('location')!
  const session = t.stripe.sessions.find((s) => s.url === location)
  expect(session, `a Checkout Session behind ${location}`).toBeDefined()
  return session!.id
}

/** A plan checkout paid (the 7-day trial started) on Stripe: the completed session. */
export async function paidCheckout(t: StripeHarness, user: SeededUser, plan = 'solo') {
  const id = await startCheckout(t, user, plan)
  return { ...t.stripe.complete(id) }
}

/** `checkout.session.completed` for the session as Stripe now has it. */
export const completedEvent = (t: StripeHarness, sessionId: string, o: { id?: string; created?: number; type?: string } = {}) =>
  stripeEvent(o.type ?? 'checkout.session.completed', { ...t.stripe.sessions.find((s) => s.id === sessionId)! }, o)

export async function userRow(h: Harness, id: string) {
  const [row] = await h.db.select().from(users).where(eq(users.id, id))
  return row
}

export const eventRows = (h: Harness, id?: string) => (id ? h.db.select().from(stripeEvents).where(eq(stripeEvents.id, id)) : h.db.select().from(stripeEvents))
export const purchases = (h: Harness, userId: string) => h.db.select().from(creditPurchases).where(eq(creditPurchases.userId, userId))
export const deployments = (h: Harness, customerId: string) => h.db.select().from(subscriptionDeployments).where(eq(subscriptionDeployments.customerId, customerId))

/** The billing fields of a user, to compare before and after. */
export async function billingState(h: Harness, id: string) {
  const u = await userRow(h, id)
  return {
    plan: u.plan,
    subscriptionStatus: u.subscriptionStatus,
    subscriptionId: u.subscriptionId,
    stripeCustomerId: u.stripeCustomerId,
    subscriptionPeriodEnd: u.subscriptionPeriodEnd,
    subscriptionEventAt: u.subscriptionEventAt,
    credits: u.credits,
  }
}

export const now = () => Math.floor(Date.now() / 1000)
export type { StripeServer }

/** A wallet top-up started by `user` (`GET /api/wallet/top-up`) and paid on Stripe: the completed session. */
export async function paidTopUp(t: StripeHarness, user: SeededUser, address: string, amount = 1000) {
  const res = await call(t.h, 'GET', `/api/wallet/top-up?amount=${amount}&address=${address}`, { user, headers: { 'cf-connecting-ip': freshIp() } })
  expect(res.status, await res.clone().text()).toBe(200)
  return t.stripe.complete(t.stripe.sessions.at(-1)!.id)
}

/** The wallet's card-funded payment sessions (there must never be more than one). */
export const cardSessionsOf = (h: Harness, wallet: string) =>
  h.db.select().from(paymentSessions).where(and(eq(paymentSessions.walletAddress, wallet.toLowerCase()), eq(paymentSessions.source, 'card')))

export const topUpRows = (h: Harness, wallet: string) => h.db.select().from(walletTopUps).where(eq(walletTopUps.walletAddress, wallet.toLowerCase()))
