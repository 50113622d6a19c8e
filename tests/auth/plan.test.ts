import { beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { createPlatformApp, createRouter } from '../../lib/app'
import { identityHeaders } from '../../lib/auth/identity'
import { requirePlanMatch } from '../../lib/auth/plan'
import { requireSession } from '../../lib/auth/session'
import type { Services } from '../../lib/context'
import type { Db } from '../../lib/db/rls'
import { managedServices } from '../../lib/services/managed'
import { useHarness } from '../support/harness'
import { eq } from 'drizzle-orm'
import { users } from '../../schema'
import { setPlan } from './helpers'

type App = ReturnType<typeof createPlatformApp>
let app: App
let noDb: App
let brokenDb: App

const routes = () => {
  const r = createRouter()
  // Identity headers are unsigned here (no secret, ALLOW_UNSIGNED_IDENTITY): identity tests cover signing.
  r.post('/ai/identity', identityHeaders, requirePlanMatch, (c) => c.json({ plan: c.var.plan ?? null }))
  r.post('/ai/session', requireSession, requirePlanMatch, (c) => c.json({ plan: c.var.plan ?? null }))
  r.post('/ai/nobody', requirePlanMatch, (c) => c.json({ plan: c.var.plan ?? null }))
  return r
}

const h = useHarness({ env: { ALLOW_UNSIGNED_IDENTITY: '1' } })
beforeAll(async () => {
  app = createPlatformApp(() => h.services).route('/', routes())
  noDb = createPlatformApp(managedServices({})).route('/', routes()) // a Worker with no database
  const failing = { select: () => { throw new Error('connection refused') } } as unknown as Db
  brokenDb = createPlatformApp((): Services => ({ ...h.services, db: failing })).route('/', routes())
})
beforeEach(async () => {
  await setPlan(h.db, h.users.alice.id, 'solo', 'sub_alice')
  await setPlan(h.db, h.users.bob.id, null, null)
})

const asAlice = (extra: Record<string, string> = {}, target = app) =>
  target.request('/ai/identity', { method: 'POST', headers: { 'x-user-id': h.users.alice.id, ...extra } })

const asBob = (extra: Record<string, string>) =>
  app.request('/ai/identity', { method: 'POST', headers: { 'x-user-id': h.users.bob.id, ...extra } })

const MISMATCH = { error: 'Subscription mismatch', code: 'SUBSCRIPTION_MISMATCH' }
const PLAN_REQUIRED = { error: 'Paid plan required', code: 'PLAN_REQUIRED' }
async function expectBody(res: Response, status: number, body: object) {
  expect(res.status).toBe(status)
  expect(await res.json()).toEqual(body)
}

describe('plan middleware: headers against the stored record', () => {
  it('matching plan and subscription id pass; c.var.plan is the stored plan', async () => {
    await expectBody(await asAlice({ 'x-user-plan': 'solo', 'x-subscription-id': 'sub_alice' }), 200, { plan: 'solo' })
    await expectBody(await asAlice(), 200, { plan: 'solo' }) // nothing claimed, nothing to contradict
  })

  it('a different plan is 402 SUBSCRIPTION_MISMATCH', async () => {
    await expectBody(await asAlice({ 'x-user-plan': 'network', 'x-subscription-id': 'sub_alice' }), 402, MISMATCH)
    await expectBody(await asAlice({ 'x-user-plan': 'pro' }), 402, MISMATCH) // legacy pro is collective
  })

  it('a different or empty subscription id is 402 SUBSCRIPTION_MISMATCH', async () => {
    await expectBody(await asAlice({ 'x-user-plan': 'solo', 'x-subscription-id': 'sub_bob' }), 402, MISMATCH)
    await expectBody(await asAlice({ 'x-subscription-id': '' }), 402, MISMATCH)
  })

  it('plans compare after normalizePlan: legacy `starter` matches stored `solo`, stored `scale` matches `label`', async () => {
    await expectBody(await asAlice({ 'x-user-plan': 'starter', 'x-subscription-id': 'sub_alice' }), 200, { plan: 'solo' })
    await setPlan(h.db, h.users.alice.id, 'scale', 'sub_alice')
    await expectBody(await asAlice({ 'x-user-plan': 'label' }), 200, { plan: 'label' })
  })

  it('a claimed plan against a record with no plan is a mismatch; no claim and no plan is PLAN_REQUIRED', async () => {
    await expectBody(await asBob({ 'x-user-plan': 'solo' }), 402, MISMATCH)
    await expectBody(await asBob({ 'x-subscription-id': 'sub_x' }), 402, MISMATCH)
    await expectBody(await asBob({}), 402, PLAN_REQUIRED)
  })

  it('the deprecated `free` plan is 402 PLAN_REQUIRED, claimed or stored', async () => {
    await expectBody(await asAlice({ 'x-user-plan': 'free' }), 402, PLAN_REQUIRED)
    await expectBody(await asAlice({ 'x-user-plan': 'FREE' }), 402, PLAN_REQUIRED)
    await setPlan(h.db, h.users.alice.id, 'free', null)
    await expectBody(await asAlice(), 402, PLAN_REQUIRED)
  })

  it('an identity with no stored record (default `anonymous`, unknown id) is a mismatch', async () => {
    await expectBody(await app.request('/ai/identity', { method: 'POST', headers: { 'x-user-plan': 'solo' } }), 402, MISMATCH)
    await expectBody(await asAlice({ 'x-user-id': 'no-such-user' }), 402, MISMATCH)
  })

  it('the session user is used when there are no identity headers', async () => {
    const post = (headers: Record<string, string>) => app.request('/ai/session', { method: 'POST', headers: { cookie: h.users.alice.cookie, ...headers } })
    await expectBody(await post({ 'x-user-plan': 'solo', 'x-subscription-id': 'sub_alice' }), 200, { plan: 'solo' })
    await expectBody(await post({ 'x-user-plan': 'collective' }), 402, MISMATCH)
  })

  it('no authenticated caller at all is 401', async () => {
    await expectBody(await app.request('/ai/nobody', { method: 'POST', headers: { 'x-user-plan': 'solo' } }), 401, { error: 'Unauthorized', code: 'UNAUTHORIZED' })
  })
})

describe('plan middleware: a paid plan or a live trial, admins bypass', () => {
  const day = 24 * 60 * 60 * 1000

  it('a live account trial passes with no plan, on solo; an ended one is PLAN_REQUIRED', async () => {
    await setPlan(h.db, h.users.bob.id, null, null, { trialEndsAt: new Date(Date.now() + 3 * day) })
    await expectBody(await asBob({}), 200, { plan: 'solo' })
    await setPlan(h.db, h.users.bob.id, null, null, { trialEndsAt: new Date(Date.now() - 1000) })
    await expectBody(await asBob({}), 402, PLAN_REQUIRED)
  })

  it('a plan whose subscription is canceled or inactive is PLAN_REQUIRED; past_due (card retries) still passes', async () => {
    for (const status of ['canceled', 'inactive']) {
      await setPlan(h.db, h.users.alice.id, 'collective', 'sub_alice', { status })
      await expectBody(await asAlice({ 'x-user-plan': 'collective' }), 402, PLAN_REQUIRED)
    }
    await setPlan(h.db, h.users.alice.id, 'collective', 'sub_alice', { status: 'past_due' })
    await expectBody(await asAlice({ 'x-user-plan': 'collective' }), 200, { plan: 'collective' })
  })

  it('the claim is checked before payment: a wrong claim on a lapsed record is still a mismatch', async () => {
    await setPlan(h.db, h.users.alice.id, 'solo', 'sub_alice', { status: 'canceled' })
    await expectBody(await asAlice({ 'x-user-plan': 'label' }), 402, MISMATCH)
  })

  it('a verified admin with no plan passes (identity headers and session); an unverified admin address does not', async () => {
    const admin = h.users.admin
    await setPlan(h.db, admin.id, null, null)
    const viaHeaders = await app.request('/ai/identity', { method: 'POST', headers: { 'x-user-id': admin.id } })
    await expectBody(viaHeaders, 200, { plan: 'solo' })
    await expectBody(await app.request('/ai/session', { method: 'POST', headers: { cookie: admin.cookie } }), 200, { plan: 'solo' })
    // Someone who signed up with an admin's address but never verified it is no admin.
    await h.db.update(users).set({ emailVerifiedAt: null }).where(eq(users.id, admin.id))
    try {
      await expectBody(await app.request('/ai/identity', { method: 'POST', headers: { 'x-user-id': admin.id } }), 402, PLAN_REQUIRED)
    } finally {
      await h.db.update(users).set({ emailVerifiedAt: new Date() }).where(eq(users.id, admin.id))
    }
  })
})

describe('plan middleware: without a database the headers alone are used', () => {
  const post = (headers: Record<string, string>) =>
    noDb.request('/ai/identity', { method: 'POST', headers: { 'x-user-id': 'u-1', ...headers } }, { ALLOW_UNSIGNED_IDENTITY: '1' })

  it('any claimed plan is taken as sent (normalized)', async () => {
    await expectBody(await post({ 'x-user-plan': 'network', 'x-subscription-id': 'anything' }), 200, { plan: 'network' })
    await expectBody(await post({ 'x-user-plan': 'pro' }), 200, { plan: 'collective' })
    // No claim and no record to consult: no paid plan is shown.
    await expectBody(await post({}), 402, PLAN_REQUIRED)
  })

  it('`free` is still 402 PLAN_REQUIRED', async () => {
    await expectBody(await post({ 'x-user-plan': 'free' }), 402, PLAN_REQUIRED)
  })

  it('a configured database that fails is a 500, never a reason to trust the headers', async () => {
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {})
    const res = await asAlice({ 'x-user-plan': 'network' }, brokenDb)
    expect(res.status).toBe(500)
    expect(await res.json()).toEqual({ error: 'Internal server error', code: 'INTERNAL' })
    spy.mockRestore()
  })
})
