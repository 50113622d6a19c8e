import { beforeAll, describe, expect, it } from 'vitest'
import { createPlatformApp, createRouter } from '../../lib/app'
import { requireAdminIdentity } from '../../functions/backend/admin'
import { identityHeaders, signIdentity } from '../../lib/auth/identity'
import type { Services } from '../../lib/context'
import { hmacSha256Hex } from '../../lib/crypto'
import { ADMIN_EMAIL, useHarness } from '../support/harness'
import { withConfig } from './helpers'

const HMAC = 'hmac-secret-for-identity'
const INTERNAL = 'internal-key-for-identity'

type App = ReturnType<typeof createPlatformApp>
let both: App // HMAC_SECRET and INTERNAL_API_KEY
let internalOnly: App
let neither: App

const mount = (services: () => Services) => {
  const r = createRouter()
  r.get('/me', identityHeaders, (c) => c.json(c.var.identity!))
  r.get('/admin', identityHeaders, requireAdminIdentity, (c) => c.json({ admin: c.var.identity!.email }))
  r.get('/admin-alone', requireAdminIdentity, (c) => c.json({ admin: c.var.identity!.email }))
  return createPlatformApp(services).route('/', r)
}

const h = useHarness({ env: { HMAC_SECRET: HMAC, INTERNAL_API_KEY: INTERNAL } })
beforeAll(async () => {
  both = mount(() => h.services)
  internalOnly = mount(() => withConfig(h.services, { HMAC_SECRET: undefined }))
  // The explicit local-development opt-in; without it no secret is 500 (identity-edge.test.ts).
  neither = mount(() => withConfig(h.services, { HMAC_SECRET: undefined, INTERNAL_API_KEY: undefined, ALLOW_UNSIGNED_IDENTITY: true }))
})

interface Who {
  userId?: string
  email?: string
  role?: string
}
/** Signing time of every signature in this file (the tolerance is 5 minutes; identity-edge.test.ts covers it). */
const TS = Math.floor(Date.now() / 1000)
const sign = (secret: string, who: Who) => signIdentity(secret, who, TS)
const headersOf = (who: Who, signature?: string) => {
  const headers: Record<string, string> = {}
  if (who.userId !== undefined) headers['x-user-id'] = who.userId
  if (who.email !== undefined) headers['x-user-email'] = who.email
  if (who.role !== undefined) headers['x-user-role'] = who.role
  if (signature !== undefined) headers['x-user-signature'] = signature
  if (signature !== undefined) headers['x-identity-timestamp'] = String(TS)
  return headers
}
const call = (app: App, path: string, who: Who, signature?: string) => app.request(path, { headers: headersOf(who, signature) })

const alice: Who = { userId: 'user-1', email: 'alice@example.com', role: 'user' }

async function expectError(res: Response, status: number, body: object) {
  expect(res.status).toBe(status)
  expect(await res.json()).toEqual(body)
}
const INVALID = { error: 'Invalid signature', code: 'INVALID_SIGNATURE' }
const REQUIRED = { error: 'Signature required', code: 'SIGNATURE_REQUIRED' }

describe('identity headers: signed (HMAC_SECRET set)', () => {
  it('a correct signature sets c.var.identity', async () => {
    const res = await call(both, '/me', alice, await sign(HMAC, alice))
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual(alice)
  })

  it('the signature is lower-case hex HMAC-SHA256 of `{userId}:{userEmail}:{userRole}:{timestamp}`', async () => {
    const sig = await hmacSha256Hex(HMAC, `user-1:alice@example.com:user:${TS}`)
    expect(sig).toMatch(/^[0-9a-f]{64}$/)
    expect(await sign(HMAC, alice)).toBe(sig)
    expect((await call(both, '/me', alice, sig)).status).toBe(200)
  })

  it('absent headers take the defaults in the signature: `anonymous::user`', async () => {
    const sig = await hmacSha256Hex(HMAC, `anonymous::user:${TS}`)
    const res = await call(both, '/me', {}, sig)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ userId: 'anonymous', role: 'user' })
    // Only the id or only the role absent: its default is what was signed.
    expect((await call(both, '/me', { email: 'a@x.io' }, await hmacSha256Hex(HMAC, `anonymous:a@x.io:user:${TS}`))).status).toBe(200)
    expect((await call(both, '/me', { userId: 'u', role: 'admin' }, await hmacSha256Hex(HMAC, `u::admin:${TS}`))).status).toBe(200)
  })

  it('tampering with any one field is 401 INVALID_SIGNATURE', async () => {
    const sig = await sign(HMAC, alice)
    for (const tampered of [
      { ...alice, userId: 'user-2' },
      { ...alice, email: 'admin@example.com' },
      { ...alice, email: 'ALICE@example.com' }, // the signature covers the email exactly as sent
      { ...alice, role: 'admin' },
      { userId: alice.userId, role: alice.role }, // email dropped
      { email: alice.email, role: alice.role }, // id dropped: `anonymous` is not `user-1`
    ]) {
      await expectError(await call(both, '/me', tampered, sig), 401, INVALID)
    }
    const flipped = (sig[0] === 'a' ? 'b' : 'a') + sig.slice(1)
    for (const bad of [flipped, sig.slice(0, -1), `${sig}0`, 'not-hex', sig.toUpperCase()]) {
      await expectError(await call(both, '/me', alice, bad), 401, INVALID)
    }
  })

  it('a missing or empty signature is 401 SIGNATURE_REQUIRED, also with no identity headers at all', async () => {
    await expectError(await call(both, '/me', alice), 401, REQUIRED)
    await expectError(await call(both, '/me', alice, ''), 401, REQUIRED)
    await expectError(await call(both, '/me', {}), 401, REQUIRED)
  })

  it('HMAC_SECRET is preferred: a signature made with INTERNAL_API_KEY fails', async () => {
    await expectError(await call(both, '/me', alice, await sign(INTERNAL, alice)), 401, INVALID)
  })

  it('a signed triple cannot be re-split across the colons', async () => {
    // The web tier signed id `a:b`, email `c@x.io`; the same bytes must not verify as id `a`, email `b:c@x.io`.
    const sig = await sign(HMAC, { userId: 'a:b', email: 'c@x.io', role: 'user' })
    expect((await call(both, '/me', { userId: 'a:b', email: 'c@x.io', role: 'user' }, sig)).status).toBe(200)
    await expectError(await call(both, '/me', { userId: 'a', email: 'b:c@x.io', role: 'user' }, sig), 401, INVALID)
    // Likewise moving the boundary between email and role.
    const sig2 = await hmacSha256Hex(HMAC, `u:e@x.io:admin:user:${TS}`)
    await expectError(await call(both, '/me', { userId: 'u', email: 'e@x.io:admin', role: 'user' }, sig2), 401, INVALID)
    await expectError(await call(both, '/me', { userId: 'u', email: 'e@x.io', role: 'admin:user' }, sig2), 401, INVALID)
    await expect(sign(HMAC, { email: 'b:c@x.io' })).rejects.toThrow(/":"/)
  })
})

describe('identity headers: INTERNAL_API_KEY as the fallback secret', () => {
  it('with HMAC_SECRET unset, INTERNAL_API_KEY signs', async () => {
    const res = await call(internalOnly, '/me', alice, await sign(INTERNAL, alice))
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual(alice)
  })

  it('and the signature is still required and checked', async () => {
    await expectError(await call(internalOnly, '/me', alice), 401, REQUIRED)
    await expectError(await call(internalOnly, '/me', alice, await sign(HMAC, alice)), 401, INVALID)
  })
})

describe('identity headers: no secret, ALLOW_UNSIGNED_IDENTITY set (local development: the spec\'s unsigned mode)', () => {
  it('unsigned headers are taken as sent, with the defaults', async () => {
    const res = await call(neither, '/me', alice)
    expect(await res.json()).toEqual(alice)
    expect(await (await call(neither, '/me', {})).json()).toEqual({ userId: 'anonymous', role: 'user' })
  })

  it('a signature, if sent, is ignored', async () => {
    expect((await call(neither, '/me', alice, 'garbage')).status).toBe(200)
  })
})

describe('admin identity: x-user-email against ADMIN_EMAILS', () => {
  const admin: Who = { userId: 'admin-1', email: 'Admin@Example.COM', role: 'user' }

  it('a signed admin email passes, compared case-insensitively', async () => {
    const res = await call(both, '/admin', admin, await sign(HMAC, admin))
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ admin: 'Admin@Example.COM' })
    expect(ADMIN_EMAIL).toBe('admin@example.com')
  })

  it('a signed non-admin is 403 ADMIN_REQUIRED, even with role `admin`', async () => {
    const ADMIN_REQUIRED = { error: 'Admin access required', code: 'ADMIN_REQUIRED' }
    await expectError(await call(both, '/admin', alice, await sign(HMAC, alice)), 403, ADMIN_REQUIRED)
    const roleOnly = { ...alice, role: 'admin' }
    await expectError(await call(both, '/admin', roleOnly, await sign(HMAC, roleOnly)), 403, ADMIN_REQUIRED)
    await expectError(await call(both, '/admin', {}, await sign(HMAC, {})), 403, ADMIN_REQUIRED)
    // A look-alike is not a case-insensitive match.
    const lookalike = { email: 'admin@example.com.evil.io' }
    await expectError(await call(both, '/admin', lookalike, await sign(HMAC, lookalike)), 403, ADMIN_REQUIRED)
  })

  it('an unsigned or mis-signed admin email is rejected when a secret is set', async () => {
    await expectError(await call(both, '/admin', admin), 401, REQUIRED)
    await expectError(await call(both, '/admin', admin, await sign(HMAC, alice)), 401, INVALID)
    // requireAdminIdentity on its own verifies the headers first, never trusting a raw email.
    await expectError(await call(both, '/admin-alone', admin), 401, REQUIRED)
    expect((await call(both, '/admin-alone', admin, await sign(HMAC, admin))).status).toBe(200)
  })

  it('without any secret an unsigned admin email is accepted only under ALLOW_UNSIGNED_IDENTITY (documented)', async () => {
    expect((await call(neither, '/admin', admin)).status).toBe(200)
  })
})
