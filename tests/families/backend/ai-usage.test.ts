import { eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { signedIdentityHeaders } from '../../../lib/auth/identity'
import { spendUnits } from '../../../lib/billing/usage'
import { seal } from '../../../lib/secret-box'
import { providerKeys } from '../../../schema'
import { setPlan } from '../../auth/helpers'
import { type SeededUser, useHarness } from '../../support/harness'
import { backendCall, withinOneWindow } from '../../support/requests'

const HMAC = 'ai-identity-secret'
const h = useHarness({ env: { HMAC_SECRET: HMAC } })

const usage = async (user: Pick<SeededUser, 'id' | 'email'>, extra: Record<string, string> = {}, ip?: string) => {
  const headers = { ...(await signedIdentityHeaders(HMAC, { userId: user.id, email: user.email })), ...extra, ...(ip && { 'cf-connecting-ip': ip }) }
  return ip ? h.backend.request('/api/ai/usage', { headers }) : backendCall(h.backend, 'GET', '/api/ai/usage', { headers })
}
const fresh = () => h.seedUser('ai', `ai-${crypto.randomUUID().slice(0, 8)}@example.com`)

describe('GET /api/ai/usage (backend, behind the plan check)', () => {
  it("a paying user gets their plan and today's units", async () => {
    const user = await fresh()
    await setPlan(h.db, user.id, 'label', 'sub_label1')
    await spendUnits(h.services, user.id, 'label', 40)
    const res = await usage(user, { 'x-user-plan': 'label', 'x-subscription-id': 'sub_label1' })
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body).toMatchObject({ plan: 'label', byokEnabled: false, dailyUnits: 3000, used: 40, remaining: 2960 })
    expect(res.headers.get('ratelimit-limit')).toBe('30')
  })

  it('byokEnabled only for a stored key this server can open: one under a key id it no longer has reads as not set', async () => {
    const user = await fresh()
    await setPlan(h.db, user.id, 'solo', 'sub_byok1')
    const sealed = await seal(h.services.config, 'sk-own-key', user.id, 'byok')
    await h.db.insert(providerKeys).values({ userId: user.id, provider: 'openai', keyId: sealed.keyId, sealed: sealed.sealed })
    expect(await (await usage(user)).json()).toMatchObject({ byokEnabled: true })
    await h.db.update(providerKeys).set({ keyId: 'retired-key' }).where(eq(providerKeys.userId, user.id))
    const res = await usage(user)
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ plan: 'solo', byokEnabled: false })
  })

  it('a plan or subscription the record does not back is 402 SUBSCRIPTION_MISMATCH', async () => {
    const user = await fresh()
    await setPlan(h.db, user.id, 'solo', 'sub_solo1')
    for (const extra of [{ 'x-user-plan': 'network' }, { 'x-subscription-id': 'sub_other' }] as Record<string, string>[]) {
      const res = await usage(user, extra)
      expect(res.status).toBe(402)
      expect(await res.json()).toEqual({ error: 'Subscription mismatch', code: 'SUBSCRIPTION_MISMATCH' })
    }
  })

  it('no paid plan after the trial, or a canceled subscription, is 402 PLAN_REQUIRED; a live trial passes on solo', async () => {
    const user = await fresh()
    await setPlan(h.db, user.id, null, null, { trialEndsAt: new Date(Date.now() - 1000) })
    expect((await usage(user)).status).toBe(402)
    await setPlan(h.db, user.id, 'collective', 'sub_c1', { status: 'canceled' })
    expect(await (await usage(user)).json()).toEqual({ error: 'Paid plan required', code: 'PLAN_REQUIRED' })
    await setPlan(h.db, user.id, null, null, { trialEndsAt: new Date(Date.now() + 86_400_000) })
    expect(await (await usage(user)).json()).toMatchObject({ plan: 'solo', dailyUnits: 600 })
  })

  it('unsigned or forged identity headers are 401', async () => {
    const unsigned = await backendCall(h.backend, 'GET', '/api/ai/usage', { headers: { 'x-user-id': h.users.alice.id } })
    expect(unsigned.status).toBe(401)
    const forged = await backendCall(h.backend, 'GET', '/api/ai/usage', {
      headers: { ...(await signedIdentityHeaders('wrong-secret', { userId: h.users.alice.id })) },
    })
    expect(forged.status).toBe(401)
  })

  it('30 requests a minute per address, then 429 `AI rate limit exceeded.`', async () => {
    const user = await fresh()
    await setPlan(h.db, user.id, 'solo', 'sub_rl1')
    const ip = `203.0.113.${Math.floor(Math.random() * 200) + 20}`
    await withinOneWindow(60)
    for (let i = 0; i < 30; i++) expect((await usage(user, {}, ip)).status).toBe(200)
    const res = await usage(user, {}, ip)
    expect(res.status).toBe(429)
    expect(await res.json()).toEqual({ error: 'AI rate limit exceeded.', code: 'RATE_LIMITED' })
    expect(res.headers.get('retry-after')).toBeTruthy()
  })
})
