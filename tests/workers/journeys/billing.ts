import { eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { providerKeys, users } from '../../../schema'
import type { StripeServer } from '../../support/stripe-server'
import type { WorkerdPlatform } from '../../support/workerd-platform'
import { browser } from './browser'
import { signedIn, UNAUTHORIZED } from './people'

/** billing: the plans and the caller's state, a sealed BYOK key, a plan checkout and a credit pack on Stripe. */
export function billingJourney(p: WorkerdPlatform, stripe: StripeServer) {
  describe('billing', () => {
    it('reads the plans, seals a BYOK key, starts a plan checkout and a credit pack; refuses the subscribed, the signed out and bad input', async () => {
      const alice = await signedIn(p, 'Alice')
      const state = (await (await alice.get('/api/billing')).json()) as Record<string, unknown>
      expect(state).toMatchObject({ currentPlan: 'solo', subscriptionStatus: 'inactive', byokEnabled: false, credits: 0 })
      expect(Object.keys(state.plans as object)).toEqual(['solo', 'collective', 'label', 'network'])

      const byok = await alice.post('/api/billing', { action: 'enable-byok', apiKey: 'sk-journey-secret-key', provider: 'openai' })
      expect(byok.status, await byok.clone().text()).toBe(200)
      const [sealed] = await p.db.select().from(providerKeys).where(eq(providerKeys.userId, alice.user.id))
      expect(JSON.stringify(sealed)).not.toContain('sk-journey-secret-key')
      expect(await (await alice.get('/api/billing')).json()).toMatchObject({ byokEnabled: true, byokProvider: 'openai' })

      const checkout = await alice.post('/api/billing', { action: 'create-checkout', plan: 'collective' })
      expect(checkout.status, await checkout.clone().text()).toBe(200)
      const created = stripe.sessions.at(-1)!
      expect(((await checkout.json()) as { url: string }).url).toBe(created.url)
      expect(stripe.session(created.id)).toMatchObject({ mode: 'subscription', client_reference_id: alice.user.id, metadata: { kind: 'plan', userId: alice.user.id, plan: 'collective' } })
      const credits = await alice.post('/api/billing', { action: 'buy-credits', pack: 200 })
      expect(await credits.json()).toMatchObject({ success: true, credits: 15, price: '£15.00' })

      // A subscriber cannot start a second subscription.
      await p.db.update(users).set({ plan: 'solo', subscriptionStatus: 'active' }).where(eq(users.id, alice.user.id))
      const again = await alice.post('/api/billing', { action: 'create-checkout', plan: 'label' })
      expect(again.status).toBe(409)

      const signedOut = await browser(p).get('/api/billing')
      expect(signedOut.status).toBe(401)
      expect(await signedOut.json()).toEqual(UNAUTHORIZED)
      const bad = await alice.post('/api/billing', { action: 'buy-credits', pack: 100 })
      expect(bad.status).toBe(400)
      expect(await bad.json()).toMatchObject({ error: 'Invalid pack' })
    })
  })
}
