import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createBackendApp } from '../../../functions/backend/app'
import { requireAdminIdentity } from '../../../functions/backend/admin'
import { identityHeaders, signedIdentityHeaders } from '../../../lib/auth/identity'
import { requirePlanMatch } from '../../../lib/auth/plan'
import { requireSharedKey } from '../../../lib/auth/shared-key'
import { setPlan } from '../../auth/helpers'
import { ADMIN_EMAIL, useHarness } from '../../support/harness'
import { type Loopback, serveFetch } from '../../support/loopback'

/**
 * The backend's auth schemes on the backend's own stack (error shape) over a real socket: no route uses
 * some of them yet, so a few probe routes are mounted behind them.
 */
const INTERNAL = 'backend-shared-key'
const HMAC = 'backend-identity-secret'
let server: Loopback

const h = useHarness({ env: { INTERNAL_API_KEY: INTERNAL, HMAC_SECRET: HMAC } })
beforeAll(async () => {
  const app = createBackendApp(() => h.services)
  app.get('/api/probe/core', requireSharedKey, (c) => c.json({ ok: true }))
  app.get('/api/probe/me', identityHeaders, (c) => c.json(c.var.identity!))
  app.get('/api/probe/admin', identityHeaders, requireAdminIdentity, (c) => c.json({ ok: true }))
  app.post('/api/ai/probe', identityHeaders, requirePlanMatch, (c) => c.json({ plan: c.var.plan ?? null }))
  server = await serveFetch(app.fetch)
  await setPlan(h.db, h.users.alice.id, 'collective', 'sub_alice')
})
afterAll(() => server?.close())

let ipCounter = 0
const send = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
  fetch(`${server.url}${path}`, { method, headers: { 'cf-connecting-ip': `192.0.2.${++ipCounter}`, ...headers } })
async function expectBody(res: Response, status: number, body: object) {
  expect(res.status).toBe(status)
  expect(await res.json()).toEqual(body)
}
const signed = (who: { userId?: string; email?: string; role?: string }, secret = HMAC) => signedIdentityHeaders(secret, who)

describe('backend: shared key over HTTP', () => {
  it('right key 200; missing 401; Basic 401; wrong 403', async () => {
    const ok = await send('/api/probe/core', { authorization: `Bearer ${INTERNAL}` })
    await expectBody(ok, 200, { ok: true })
    await expectBody(await send('/api/probe/core'), 401, { error: 'Unauthorized', code: 'UNAUTHORIZED' })
    await expectBody(await send('/api/probe/core', { authorization: `Basic ${btoa(`u:${INTERNAL}`)}` }), 401, { error: 'Unauthorized', code: 'UNAUTHORIZED' })
    await expectBody(await send('/api/probe/core', { authorization: 'Bearer nope' }), 403, { error: 'Forbidden', code: 'FORBIDDEN' })
    // A user's signed identity is not the shared key.
    await expectBody(await send('/api/probe/core', await signed({ userId: 'u' })), 401, { error: 'Unauthorized', code: 'UNAUTHORIZED' })
  })
})

describe('backend: identity headers over HTTP', () => {
  const alice = () => ({ userId: h.users.alice.id, email: h.users.alice.email, role: 'user' })

  it('signed headers set the identity; tampering with each field is 401 INVALID_SIGNATURE', async () => {
    const headers = await signed(alice())
    await expectBody(await send('/api/probe/me', headers), 200, alice())
    const INVALID = { error: 'Invalid signature', code: 'INVALID_SIGNATURE' }
    for (const [name, value] of [
      ['x-user-id', h.users.bob.id],
      ['x-user-email', ADMIN_EMAIL],
      ['x-user-role', 'admin'],
      ['x-user-signature', '0'.repeat(64)],
    ]) {
      await expectBody(await send('/api/probe/me', { ...headers, [name]: value }), 401, INVALID)
    }
  })

  it('no signature is 401 SIGNATURE_REQUIRED; a signature under INTERNAL_API_KEY is refused while HMAC_SECRET is set', async () => {
    await expectBody(await send('/api/probe/me', { 'x-user-id': 'u' }), 401, { error: 'Signature required', code: 'SIGNATURE_REQUIRED' })
    await expectBody(await send('/api/probe/me', await signed({ userId: 'u' }, INTERNAL)), 401, { error: 'Invalid signature', code: 'INVALID_SIGNATURE' })
  })

  it('admin: a signed admin email (any case) passes; alice is 403 ADMIN_REQUIRED; an unsigned admin email is 401', async () => {
    await expectBody(await send('/api/probe/admin', await signed({ email: ADMIN_EMAIL.toUpperCase() })), 200, { ok: true })
    await expectBody(await send('/api/probe/admin', await signed(alice())), 403, { error: 'Admin access required', code: 'ADMIN_REQUIRED' })
    await expectBody(await send('/api/probe/admin', { 'x-user-email': ADMIN_EMAIL }), 401, { error: 'Signature required', code: 'SIGNATURE_REQUIRED' })
  })

  it('plan headers on an AI route are checked against the stored record of the signed user', async () => {
    const headers = await signed(alice())
    const ai = await send('/api/ai/probe', { ...headers, 'x-user-plan': 'pro', 'x-subscription-id': 'sub_alice' }, 'POST')
    await expectBody(ai, 200, { plan: 'collective' })
    const MISMATCH = { error: 'Subscription mismatch', code: 'SUBSCRIPTION_MISMATCH' }
    await expectBody(await send('/api/ai/probe', { ...headers, 'x-user-plan': 'network' }, 'POST'), 402, MISMATCH)
    await expectBody(await send('/api/ai/probe', { ...headers, 'x-subscription-id': 'sub_other' }, 'POST'), 402, MISMATCH)
    await expectBody(await send('/api/ai/probe', { ...headers, 'x-user-plan': 'free' }, 'POST'), 402, { error: 'Paid plan required', code: 'PLAN_REQUIRED' })
    // Claiming to be bob without bob's signature gets nowhere near the plan check.
    await expectBody(await send('/api/ai/probe', { ...headers, 'x-user-id': h.users.bob.id }, 'POST'), 401, { error: 'Invalid signature', code: 'INVALID_SIGNATURE' })
  })
})
