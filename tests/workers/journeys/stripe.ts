import { eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { DEPLOY_SWEEP_AFTER_MS } from '../../../functions/stripe/deploy-outbox'
import { stripeEvents, subscriptionDeployOutbox, subscriptionDeployments, users } from '../../../schema'
import { signedEvent, stripeEvent, type StripeServer } from '../../support/stripe-server'
import type { WorkerdPlatform } from '../../support/workerd-platform'
import { browser } from './browser'
import { delivered, fire } from './queue'
import { signedIn, UNAUTHORIZED } from './people'

/** stripe: checkout (303 to Stripe), the signed webhook applying it, the queued deploy reaching the backend, verify. */
export function stripeJourney(p: WorkerdPlatform, stripe: StripeServer) {
  describe('stripe', () => {
    it('checks out, applies the signed webhook once, deploys through the queue and the backend, verifies; refuses a replay, a forgery, another user and the signed out', async () => {
      const dave = await signedIn(p, 'Dave')
      const start = await dave.get('/api/stripe/checkout?plan=collective')
      expect(start.status, await start.clone().text()).toBe(303)
      const session = stripe.sessions.find((s) => s.url === start.headers.get('location'))!
      expect(session).toBeDefined()
      const paid = stripe.complete(session.id)
      const event = stripeEvent('checkout.session.completed', { ...paid })
      const signed = signedEvent(stripe.webhookSecret, event)
      const hook = () => p.fetch('/api/stripe/webhook', { method: 'POST', headers: signed.headers, body: signed.payload })
      const first = await hook()
      expect(await first.json()).toEqual({ received: true, outcome: 'applied' })
      const [row] = await p.db.select().from(users).where(eq(users.id, dave.user.id))
      expect(row).toMatchObject({ plan: 'collective', subscriptionStatus: 'active', subscriptionId: paid.subscription, stripeCustomerId: paid.customer })

      // The deploy went through QStash to the receiver, which called the backend Worker.
      const [deploy] = await delivered(p, '/api/queue/subscription-deploy')
      expect(deploy.state).toBe('delivered')
      expect(await p.db.select().from(subscriptionDeployments).where(eq(subscriptionDeployments.customerId, paid.customer!))).toMatchObject([
        { deployKey: paid.subscription, tier: 'collective' },
      ])

      const verify = await dave.get(`/api/checkout/verify?session_id=${session.id}`)
      expect(verify.status, await verify.clone().text()).toBe(200)
      expect(await verify.json()).toMatchObject({ plan: 'collective', status: 'active', customerId: paid.customer })

      // Replay: the same delivery changes nothing and publishes no second deploy.
      expect(await (await hook()).json()).toEqual({ received: true, outcome: 'duplicate' })
      expect(p.qstash.published.filter((m) => new URL(m.destination).pathname === '/api/queue/subscription-deploy')).toHaveLength(1)
      expect(await p.db.select().from(stripeEvents).where(eq(stripeEvents.id, event.id))).toMatchObject([{ outcome: 'applied' }])
      const forged = signedEvent('whsec_attacker', stripeEvent('checkout.session.completed', { ...paid }))
      const refused = await p.fetch('/api/stripe/webhook', { method: 'POST', headers: forged.headers, body: forged.payload })
      expect(refused.status).toBe(400)
      expect(await refused.json()).toMatchObject({ code: 'WEBHOOK_SIGNATURE_INVALID' })

      // A deploy whose publish failed is kept; the sweep cron (a QStash schedule) publishes it, and it deploys.
      const fran = await signedIn(p, 'Fran')
      const franStart = await fran.get('/api/stripe/checkout?plan=solo')
      const franPaid = stripe.complete(stripe.sessions.find((s) => s.url === franStart.headers.get('location'))!.id)
      const job = { tier: 'solo', stripeCustomerId: franPaid.customer!, subscriptionId: franPaid.subscription, userId: fran.user.id }
      await p.db.insert(subscriptionDeployOutbox).values({ sessionId: franPaid.id, userId: fran.user.id, job, attempts: 1, lastError: 'Error: queue unavailable', updatedAt: new Date(Date.now() - DEPLOY_SWEEP_AFTER_MS - 1000) })
      const sweep = await fire(p, 'subscription-deploy-sweep')
      expect(sweep.state).toBe('delivered')
      expect(await p.db.select().from(subscriptionDeployOutbox).where(eq(subscriptionDeployOutbox.sessionId, franPaid.id))).toEqual([])
      expect((await delivered(p, '/api/queue/subscription-deploy', 2)).map((m) => m.state)).toEqual(['delivered', 'delivered'])
      expect(await p.db.select().from(subscriptionDeployments).where(eq(subscriptionDeployments.customerId, franPaid.customer!))).toMatchObject([{ tier: 'solo', userId: fran.user.id }])

      const eve = await signedIn(p, 'Eve')
      const theirs = await eve.get(`/api/checkout/verify?session_id=${session.id}`)
      expect(theirs.status).toBe(403)
      expect(await theirs.json()).toEqual({ error: 'Checkout session belongs to another user', code: 'FORBIDDEN' })
      const signedOut = await browser(p).get('/api/stripe/checkout?plan=solo')
      expect(signedOut.status).toBe(401)
      expect(await signedOut.json()).toEqual(UNAUTHORIZED)
      const bad = await dave.get('/api/checkout/verify?session_id=')
      expect(bad.status).toBe(400)
      expect(await bad.json()).toMatchObject({ code: 'VALIDATION' })
    })
  })
}
