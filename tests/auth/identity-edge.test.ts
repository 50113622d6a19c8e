import { beforeAll, describe, expect, it, vi } from 'vitest'
import { app as backend } from '../../functions/backend/app'
import { createPlatformApp, createRouter } from '../../lib/app'
import { identityHeaders, IDENTITY_TOLERANCE_SEC, signedIdentityHeaders, signIdentity } from '../../lib/auth/identity'
import type { Services } from '../../lib/context'
import { hmacSha256Hex } from '../../lib/crypto'
import { ADMIN_EMAIL, useHarness } from '../support/harness'
import { withConfig } from './helpers'

/** Issue #9 findings 3 (fail closed without a secret) and 12 (signed identity headers expire). */
const HMAC = 'edge-identity-secret'
type App = ReturnType<typeof createPlatformApp>
let signedApp: App
let noSecret: App
let optedIn: App
let backendNoSecret: App

const mount = (services: () => Services) => {
  const r = createRouter()
  r.get('/me', identityHeaders, (c) => c.json(c.var.identity!))
  return createPlatformApp(services).route('/', r)
}

const h = useHarness({ env: { HMAC_SECRET: HMAC } })
beforeAll(async () => {
  signedApp = mount(() => h.services)
  const none = { HMAC_SECRET: undefined, INTERNAL_API_KEY: undefined }
  noSecret = mount(() => withConfig(h.services, { ...none, NODE_ENV: 'development' }))
  optedIn = mount(() => withConfig(h.services, { ...none, ALLOW_UNSIGNED_IDENTITY: true }))
  backendNoSecret = createPlatformApp(() => withConfig(h.services, none)).route('/', backend)
})

const admin = { userId: 'admin-1', email: ADMIN_EMAIL, role: 'admin' }
const alice = { userId: 'user-1', email: 'alice@example.com', role: 'user' }
const MISCONFIGURED = { error: 'Server misconfigured', code: 'MISCONFIGURED' }

async function expectBody(res: Response, status: number, body: object) {
  expect(res.status).toBe(status)
  expect(await res.json()).toEqual(body)
}

describe('no signing secret: identity headers fail closed', () => {
  it('unsigned headers claiming an admin are 500 Server misconfigured, whatever NODE_ENV says', async () => {
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {})
    await expectBody(await noSecret.request('/me', { headers: { 'x-user-id': admin.userId, 'x-user-email': admin.email } }), 500, MISCONFIGURED)
    await expectBody(await noSecret.request('/me'), 500, MISCONFIGURED)
    // Even a signature (made with some guessed secret) is not a way in.
    await expectBody(await noSecret.request('/me', { headers: await signedIdentityHeaders('guess', admin) }), 500, MISCONFIGURED)
    expect(spy).toHaveBeenCalled()
    spy.mockRestore()
  })

  it('a Worker with no secret in its bindings refuses too (nothing to opt out of: the default is closed)', async () => {
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {})
    const worker = createPlatformApp(() => withConfig(h.services, { HMAC_SECRET: undefined, INTERNAL_API_KEY: undefined, ALLOW_UNSIGNED_IDENTITY: false }))
    worker.get('/me', identityHeaders, (c) => c.json(c.var.identity!))
    await expectBody(await worker.request('/me', { headers: { 'x-user-email': ADMIN_EMAIL } }), 500, MISCONFIGURED)
    spy.mockRestore()
  })

  it('the backend installation routes answer 500 to identity headers, while an API key still works without a secret', async () => {
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {})
    const res = await backendNoSecret.request('/api/installations', {
      headers: { 'cf-connecting-ip': '198.51.100.91', 'x-user-id': h.users.bob.id, 'x-user-email': ADMIN_EMAIL },
    })
    await expectBody(res, 500, MISCONFIGURED)
    spy.mockRestore()
  })

  it('ALLOW_UNSIGNED_IDENTITY (local development) restores the spec\'s unsigned mode', async () => {
    await expectBody(await optedIn.request('/me', { headers: { 'x-user-id': 'u', 'x-user-email': 'u@x.io' } }), 200, { userId: 'u', email: 'u@x.io', role: 'user' })
  })

  it('ALLOW_UNSIGNED_IDENTITY never weakens a configured secret', async () => {
    const both = mount(() => withConfig(h.services, { ALLOW_UNSIGNED_IDENTITY: true }))
    await expectBody(await both.request('/me', { headers: { 'x-user-id': 'u' } }), 401, { error: 'Signature required', code: 'SIGNATURE_REQUIRED' })
  })
})

describe('signed identity headers carry a timestamp inside the signature', () => {
  const now = () => Date.now()

  it('headers signed now pass; the signed string is `{userId}:{userEmail}:{userRole}:{timestamp}`', async () => {
    const headers = await signedIdentityHeaders(HMAC, alice)
    const ts = headers['x-identity-timestamp']
    expect(ts).toMatch(/^\d+$/)
    expect(headers['x-user-signature']).toBe(await hmacSha256Hex(HMAC, `user-1:alice@example.com:user:${ts}`))
    await expectBody(await signedApp.request('/me', { headers }), 200, alice)
  })

  it('inside the tolerance either way passes; outside it is 401 Signature expired', async () => {
    const margin = (IDENTITY_TOLERANCE_SEC - 5) * 1000
    for (const at of [now() - margin, now() + margin]) {
      expect((await signedApp.request('/me', { headers: await signedIdentityHeaders(HMAC, alice, at) })).status).toBe(200)
    }
    const EXPIRED = { error: 'Signature expired', code: 'INVALID_SIGNATURE' }
    const late = (IDENTITY_TOLERANCE_SEC + 5) * 1000
    for (const at of [now() - late, now() + late, now() - 365 * 24 * 3600 * 1000]) {
      await expectBody(await signedApp.request('/me', { headers: await signedIdentityHeaders(HMAC, alice, at) }), 401, EXPIRED)
    }
  })

  it('a leaked signature cannot be moved to a fresh timestamp', async () => {
    const old = await signedIdentityHeaders(HMAC, alice, now() - 3600_000)
    const moved = { ...old, 'x-identity-timestamp': String(Math.floor(now() / 1000)) }
    await expectBody(await signedApp.request('/me', { headers: moved }), 401, { error: 'Invalid signature', code: 'INVALID_SIGNATURE' })
  })

  it('the old timestamp-less signature is refused: 401 SIGNATURE_REQUIRED without the timestamp header', async () => {
    const legacy = await hmacSha256Hex(HMAC, 'user-1:alice@example.com:user')
    const headers = { 'x-user-id': alice.userId, 'x-user-email': alice.email, 'x-user-role': alice.role, 'x-user-signature': legacy }
    await expectBody(await signedApp.request('/me', { headers }), 401, { error: 'Signature timestamp required', code: 'SIGNATURE_REQUIRED' })
  })

  it('a malformed timestamp is 401 INVALID_SIGNATURE, even when the HMAC covers it', async () => {
    for (const ts of ['12.5', '-1', ' 1700000000', '0x10', '1e9', '9'.repeat(13)]) {
      const sig = await hmacSha256Hex(HMAC, `user-1:alice@example.com:user:${ts}`)
      const headers = { 'x-user-id': alice.userId, 'x-user-email': alice.email, 'x-user-role': alice.role, 'x-user-signature': sig, 'x-identity-timestamp': ts }
      await expectBody(await signedApp.request('/me', { headers }), 401, { error: 'Invalid signature', code: 'INVALID_SIGNATURE' })
    }
  })

  it('signIdentity floors a fractional timestamp, so signer and verifier agree on the digits', async () => {
    expect(await signIdentity(HMAC, alice, 1_700_000_000.9)).toBe(await hmacSha256Hex(HMAC, 'user-1:alice@example.com:user:1700000000'))
  })

  it('the backend OpenAPI document describes the scheme and the timestamp header', async () => {
    const doc = await (await h.backend.request('/openapi.json')).json()
    expect(doc.components.securitySchemes.identityHeaders.description).toContain('{userId}:{userEmail}:{userRole}:{timestamp}')
    const register = doc.paths['/api/register-link'].post
    expect(register.parameters.map((p: { name: string }) => p.name)).toContain('x-identity-timestamp')
  })
})
