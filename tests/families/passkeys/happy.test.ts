import { isoBase64URL } from '@simplewebauthn/server/helpers'
import { eq } from 'drizzle-orm'
import { beforeAll, describe, expect, it } from 'vitest'
import { app as passkeysApp } from '../../../functions/passkeys/app'
import { createPlatformApp } from '../../../lib/app'
import { parseConfig } from '../../../lib/config'
import { passkeys } from '../../../schema'
import { withConfig } from '../../auth/helpers'
import { BROWSER, type Harness, useHarness } from '../../support/harness'
import { SoftAuthenticator } from './authenticator'
import {
  authOptions,
  call,
  enrol,
  HEX_CHALLENGE,
  RP,
  registerOptions,
  registerVerify,
  sessionCookie,
  sessionUser,
  signIn,
} from './helpers'

const h = useHarness()

const rows = (userId: string) => h.db.select().from(passkeys).where(eq(passkeys.userId, userId))

describe('passkeys: registration', () => {
  it('options: attestation none, user verification required, 60 s, the configured relying party, a 0x-hex challenge', async () => {
    const { options, challenge } = await registerOptions(h, h.users.alice)
    expect(challenge).toMatch(HEX_CHALLENGE)
    expect(options.attestation).toBe('none')
    expect(options.authenticatorSelection.userVerification).toBe('required')
    // Sign-in lists no credential ids, so a passkey must be discoverable.
    expect(options.authenticatorSelection.residentKey).toBe('required')
    expect(options.timeout).toBe(60_000)
    expect(options.rp).toEqual({ id: 'localhost', name: 'Platform' })
    expect(options.user.name).toBe(h.users.alice.email)
    expect(options.user.displayName).toBe('Alice')
    expect(options.excludeCredentials).toEqual([])
    // The same 32 bytes: base64url for the browser, 0x-hex for our API.
    expect(Buffer.from(isoBase64URL.toBuffer(options.challenge)).toString('hex')).toBe(challenge.slice(2))
  })

  it('the challenge is stored server-side under its hex, bound to the user who asked', async () => {
    const { challenge } = await registerOptions(h, h.users.alice)
    expect(await h.services.kv.get(`passkey:challenge:${challenge.slice(2)}`)).toEqual({ purpose: 'register', userId: h.users.alice.id })
  })

  it('verify stores the credential with its label; the response is {ok: true}', async () => {
    const user = await h.seedUser('Reg', `reg-${crypto.randomUUID()}@example.com`)
    const authenticator = new SoftAuthenticator(RP)
    const { options, challenge } = await registerOptions(h, user)
    const res = await registerVerify(h, user, { credential: authenticator.register({ challenge: options.challenge }), challenge, label: '  Laptop  ' })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ ok: true })
    const [row] = await rows(user.id)
    expect(row).toMatchObject({ id: authenticator.id, label: 'Laptop', counter: 0, transports: ['internal'], deviceType: 'singleDevice', backedUp: false, lastUsedAt: null })
    expect(row.publicKey).toMatch(/^[A-Za-z0-9_-]+$/)
  })

  it('the label defaults to `Passkey` when absent or empty', async () => {
    const user = await h.seedUser('Default', `default-${crypto.randomUUID()}@example.com`)
    await enrol(h, user)
    await enrol(h, user, '')
    expect((await rows(user.id)).map((r) => r.label)).toEqual(['Passkey', 'Passkey'])
  })

  it("later options exclude the user's passkeys, with their transports", async () => {
    const user = await h.seedUser('Excl', `excl-${crypto.randomUUID()}@example.com`)
    const a = await enrol(h, user, 'one')
    const b = await enrol(h, user, 'two')
    const { options } = await registerOptions(h, user)
    expect(options.excludeCredentials).toEqual(
      expect.arrayContaining([
        { id: a.id, type: 'public-key', transports: ['internal'] },
        { id: b.id, type: 'public-key', transports: ['internal'] },
      ]),
    )
    expect(options.excludeCredentials).toHaveLength(2)
  })

  it('rp id, name and origin come from configuration (WEBAUTHN_RP_ID, WEBAUTHN_RP_NAME, WEBAUTHN_ORIGIN)', async () => {
    const config = parseConfig({ APP_ORIGIN: 'https://app.example.com', WEBAUTHN_RP_ID: 'example.com', WEBAUTHN_ORIGIN: 'https://login.example.com' })
    expect(config.webauthn).toEqual({ rpId: 'example.com', origin: 'https://login.example.com' })
    const rp = { webauthn: config.webauthn, WEBAUTHN_RP_NAME: 'Acme', APP_ORIGIN: [RP.origin] }
    const app = createPlatformApp(() => withConfig(h.services, rp)).route('/', passkeysApp)
    const post = (path: string, body: unknown) =>
      app.request(path, { method: 'POST', headers: { 'content-type': 'application/json', ...BROWSER, cookie: h.users.bob.cookie }, body: JSON.stringify(body) })
    const { options, challenge } = (await (await post('/api/passkey/register/options', {})).json()) as { options: any; challenge: string }
    expect(options.rp).toEqual({ id: 'example.com', name: 'Acme' })
    // The credential must come from the configured origin for the configured RP id.
    const authenticator = new SoftAuthenticator({ origin: 'https://login.example.com', rpId: 'example.com' })
    const res = await post('/api/passkey/register/verify', { credential: authenticator.register({ challenge: options.challenge }), challenge })
    expect(res.status).toBe(200)
  })
})

describe('passkeys: sign-in', () => {
  let user: Awaited<ReturnType<Harness['seedUser']>>
  let authenticator: SoftAuthenticator
  beforeAll(async () => {
    user = await h.seedUser('Signer', `signer-${crypto.randomUUID()}@example.com`)
    authenticator = await enrol(h, user, 'Phone')
  })

  it('options by email (case-insensitive): no credential ids (discoverable passkeys), user verification required', async () => {
    const { options, challenge } = await authOptions(h, `  ${user.email.toUpperCase()} `)
    expect(challenge).toMatch(HEX_CHALLENGE)
    expect(options).toMatchObject({ rpId: 'localhost', timeout: 60_000, userVerification: 'required' })
    expect(options.allowCredentials).toEqual([])
    expect(JSON.stringify(options)).not.toContain(authenticator.id)
    expect(await h.services.kv.get(`passkey:challenge:${challenge.slice(2)}`)).toEqual({ purpose: 'auth', userId: user.id })
  })

  it('verify sets the session cookie like login and answers {ok, user}; the session shows the user', async () => {
    const { res } = await signIn(h, user.email, authenticator)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ ok: true, user: { id: user.id, name: 'Signer' } })
    const setCookie = res.headers.get('set-cookie') ?? ''
    expect(setCookie).toMatch(/^service-session=[0-9a-f]{64};/)
    expect(setCookie).toMatch(/HttpOnly/)
    expect(setCookie).toMatch(/SameSite=Lax/)
    expect(setCookie).toMatch(/Path=\//)
    expect((await sessionUser(h, sessionCookie(res)))?.id).toBe(user.id)
  })

  it('stores the new signature counter and lastUsedAt at every sign-in', async () => {
    const before = Date.now()
    for (let i = 0; i < 2; i++) expect((await signIn(h, user.email, authenticator)).res.status).toBe(200)
    const [row] = await h.db.select().from(passkeys).where(eq(passkeys.id, authenticator.id))
    expect(row.counter).toBe(authenticator.counter)
    expect(row.lastUsedAt!.getTime()).toBeGreaterThanOrEqual(before - 1000)
  })

  it('an authenticator that never counts (always 0) keeps signing in', async () => {
    const other = await h.seedUser('Zero', `zero-${crypto.randomUUID()}@example.com`)
    const zero = await enrol(h, other)
    for (let i = 0; i < 2; i++) expect((await signIn(h, other.email, zero, { counter: 0 })).res.status).toBe(200)
  })

  it('an unknown email gets the same shape: an empty allowCredentials and a challenge', async () => {
    const res = await call(h, '/api/passkey/auth/options', { body: { identifier: 'nobody@example.com' } })
    expect(res.status).toBe(200)
    const { options, challenge } = (await res.json()) as { options: Record<string, unknown>; challenge: string }
    expect(challenge).toMatch(HEX_CHALLENGE)
    expect(options).toMatchObject({ rpId: 'localhost', timeout: 60_000, userVerification: 'required', allowCredentials: [] })
    expect(Object.keys(options).sort()).toEqual(Object.keys((await authOptions(h, user.email)).options).sort())
  })

  it('the sign-in routes carry the RateLimit headers', async () => {
    const res = await call(h, '/api/passkey/auth/options', { body: { identifier: user.email }, ip: '192.0.2.77' })
    expect(res.headers.get('ratelimit-limit')).toBe('20')
    expect(res.headers.get('ratelimit-remaining')).toBe('19')
  })
})

describe('passkeys: documentation', () => {
  it('the OpenAPI document lists all four routes', async () => {
    const doc = (await (await h.web.request('/api/openapi.json')).json()) as { paths: Record<string, Record<string, unknown>> }
    for (const path of ['/api/passkey/register/options', '/api/passkey/register/verify', '/api/passkey/auth/options', '/api/passkey/auth/verify']) {
      expect(doc.paths[path]?.post, path).toBeDefined()
    }
  })
})
