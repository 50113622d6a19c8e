import { eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { DEPLOY_SWEEP_AFTER_MS, DEPLOY_SWEEP_PATH } from '../../../functions/stripe/deploy-outbox'
import { signDelivery } from '../../../lib/queue/sign'
import { subscriptionDeployOutbox, users } from '../../../schema'
import { useFixture } from '../../support/harness'
import { billingState, completedEvent, deliver, delivered, deployments, eventRows, get, paidCheckout, stripeHarness } from './helpers'

/**
 * A plan checkout writes its runtime deploy to an outbox in the transaction that applies it and publishes it after
 * the commit: a queue that refuses the publish (a failing adapter) delays the deploy, never the plan; the deploy
 * sweep publishes what is left, deduplicated by the Checkout Session, so a deploy is made once.
 */
const QUEUE_KEY = 'stripe-deploy-outbox-queue-key'
const SWEEP_URL = `http://127.0.0.1:8787${DEPLOY_SWEEP_PATH}`

const t = useFixture(() => stripeHarness({ env: { QSTASH_CURRENT_SIGNING_KEY: QUEUE_KEY } }))

const newUser = (name: string) => t.h.seedUser(name, `${name.toLowerCase()}-${crypto.randomUUID().slice(0, 6)}@example.com`)
const publishesFor = (userId: string) => t.published.filter((p) => (p.body as { userId?: string }).userId === userId)
const kept = (sessionId: string) => t.h.db.select().from(subscriptionDeployOutbox).where(eq(subscriptionDeployOutbox.sessionId, sessionId))
/** Moves a kept deploy's last try past the sweep's bound (time passed since the publish failed). */
const age = (sessionId: string) =>
  t.h.db
    .update(subscriptionDeployOutbox)
    .set({ updatedAt: new Date(Date.now() - DEPLOY_SWEEP_AFTER_MS - 1000) })
    .where(eq(subscriptionDeployOutbox.sessionId, sessionId))

/** The cron's signed delivery of the sweep: its JSON answer. */
async function sweep() {
  const body = '{}'
  const res = await t.h.web.request(SWEEP_URL, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'upstash-signature': await signDelivery(QUEUE_KEY, SWEEP_URL, body) },
    body,
  })
  expect(res.status).toBe(200)
  return res.json()
}

describe('stripe: the deploy publish refused after a paid checkout', () => {
  it('webhook → 200 applied: the plan is set, the deploy kept; the sweep publishes it past the bound, and it deploys once', async () => {
    const user = await newUser('Midway')
    const session = await paidCheckout(t, user, 'network')
    const event = completedEvent(t, session.id)
    t.failPublishes(1)
    expect(await delivered(t, event)).toBe('applied')
    expect(await eventRows(t.h, event.id)).toMatchObject([{ outcome: 'applied' }])
    expect(await billingState(t.h, user.id)).toMatchObject({ plan: 'network', subscriptionStatus: 'active', subscriptionId: session.subscription, stripeCustomerId: session.customer })
    const job = { tier: 'network', stripeCustomerId: session.customer, subscriptionId: session.subscription, userId: user.id }
    expect(await kept(session.id)).toMatchObject([{ userId: user.id, job, attempts: 1, lastError: 'Error: queue unavailable' }])
    expect(publishesFor(user.id)).toEqual([])

    // Stripe's redelivery changes nothing (the event is recorded); the sweep waits out its bound.
    expect(await delivered(t, event)).toBe('duplicate')
    expect(await sweep()).toEqual({ ok: true, found: 0, published: 0, failed: 0 })
    expect(await kept(session.id)).toHaveLength(1)

    await age(session.id)
    expect(await sweep()).toEqual({ ok: true, found: 1, published: 1, failed: 0 })
    expect(await kept(session.id)).toEqual([])
    expect(publishesFor(user.id)).toEqual([{ path: '/api/queue/subscription-deploy', body: job, opts: { deduplicationId: session.id, retries: 5 } }])
    await t.idle()
    expect(await deployments(t.h, session.customer!)).toMatchObject([{ deployKey: session.subscription, tier: 'network', userId: user.id }])
  })

  it('verify → 200 with the plan applied; the deploy kept until the queue takes it; a sweep while it still refuses keeps it, counted', async () => {
    const user = await newUser('VerifyMidway')
    const session = await paidCheckout(t, user, 'solo')
    t.failPublishes(1)
    const res = await get(t.h, `/api/checkout/verify?session_id=${session.id}`, user)
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ plan: 'solo', status: 'active', customerId: session.customer })
    expect(await kept(session.id)).toMatchObject([{ attempts: 1 }])

    await age(session.id)
    t.failPublishes(1)
    expect(await sweep()).toEqual({ ok: true, found: 1, published: 0, failed: 1 })
    const [again] = await kept(session.id)
    expect(again.attempts).toBe(2)
    expect(again.updatedAt.getTime()).toBeGreaterThan(Date.now() - DEPLOY_SWEEP_AFTER_MS) // the next run waits again

    await age(session.id)
    expect(await sweep()).toEqual({ ok: true, found: 1, published: 1, failed: 0 })
    expect(await kept(session.id)).toEqual([])
    await t.idle()
    expect(await deployments(t.h, session.customer!)).toHaveLength(1)
  })

  it('a deploy left in the outbox after the queue took it (a crash before its delete) is published again and deduplicated: one deploy', async () => {
    const user = await newUser('Crash')
    const session = await paidCheckout(t, user, 'solo')
    expect(await delivered(t, completedEvent(t, session.id))).toBe('applied')
    expect(await kept(session.id)).toEqual([]) // taken by the queue, then deleted
    await t.idle()
    expect(await deployments(t.h, session.customer!)).toHaveLength(1)

    const job = publishesFor(user.id)[0].body as { tier: string; stripeCustomerId: string; subscriptionId: string | null; userId: string }
    await t.h.db.insert(subscriptionDeployOutbox).values({ sessionId: session.id, userId: user.id, job })
    await age(session.id)
    expect(await sweep()).toEqual({ ok: true, found: 1, published: 1, failed: 0 })
    expect(await kept(session.id)).toEqual([])
    await t.idle()
    expect(publishesFor(user.id)).toHaveLength(2) // published twice, with one deduplication id
    expect(await deployments(t.h, session.customer!)).toHaveLength(1)
  })

  it('a user deleted with a deploy still kept takes it along (nothing left for the sweep)', async () => {
    const user = await newUser('Gone')
    const session = await paidCheckout(t, user, 'solo')
    t.failPublishes(1)
    expect((await deliver(t, completedEvent(t, session.id))).status).toBe(200)
    expect(await kept(session.id)).toHaveLength(1)
    await t.h.db.delete(users).where(eq(users.id, user.id))
    expect(await kept(session.id)).toEqual([])
  })
})
