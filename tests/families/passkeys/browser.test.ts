import { eq } from 'drizzle-orm'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { passkeys } from '../../../schema'
import { PASSWORD, type SeededUser } from '../../support/harness'
import { CHROMIUM, chromiumInstalled, type PasskeyBrowser, startPasskeyBrowser } from '../../support/passkey-browser'
import { SoftAuthenticator } from './authenticator'

/**
 * End to end in Chromium: @simplewebauthn/browser on a same-origin page, a CDP virtual authenticator
 * (CTAP2, internal, resident keys, user verification), the real API on a loopback port.
 */
const TITLE = 'passkeys in a real browser (Chromium, virtual authenticator)'
if (!chromiumInstalled) console.warn(`${TITLE}: skipped: chromium not installed (${CHROMIUM})`)
const suite = chromiumInstalled ? describe : describe.skip

interface Call {
  status: number
  body: any
}
interface Flow {
  options: { options: Record<string, any>; challenge: string }
  credential?: Record<string, any>
  ceremony?: { ok: false; name: string; code?: string }
  verify?: Call
}

suite(chromiumInstalled ? TITLE : `${TITLE}: skipped: chromium not installed`, () => {
  let b: PasskeyBrowser
  let authenticatorId: string
  let ipSeq = 0

  beforeAll(async () => {
    b = await startPasskeyBrowser()
  }, 60_000)
  afterAll(async () => {
    await b?.close()
  }, 60_000)
  beforeEach(async () => {
    // Each test its own client address (sign-in rate limit) and its own authenticator.
    b.setClientIp(`198.18.0.${++ipSeq}`)
    authenticatorId = await b.addAuthenticator()
  })
  afterEach(async () => {
    await b.removeAuthenticator(authenticatorId)
  })

  /** Calls `window.passkeyTest[fn](...args)` in the page. */
  const run = <T = any>(fn: string, ...args: unknown[]): Promise<T> =>
    b.page.evaluate(([f, a]) => (window as any).passkeyTest[f as string](...(a as unknown[])), [fn, args] as const)
  const api = (path: string, body?: unknown) => run<Call>('api', path, body)
  const register = (label?: string, override?: Record<string, unknown>) => run<Flow>('register', label, override)
  const signIn = (email: string, override?: Record<string, unknown>) => run<Flow>('signIn', email, override)
  const sessionUserId = async () => (await run<{ user: { id: string } | null }>('session')).user?.id ?? null
  const credentials = async () =>
    (await b.cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials as Array<{ credentialId: string; privateKey: string; signCount: number }>
  const rowsOf = (userId: string) => b.h.db.select().from(passkeys).where(eq(passkeys.userId, userId))
  const setUserVerified = (isUserVerified: boolean) => b.cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified })

  /** A new user, signed in in the browser through a seeded session. */
  async function freshUser(name: string): Promise<SeededUser> {
    const user = await b.h.seedUser(name, `${name.toLowerCase()}-${crypto.randomUUID()}@example.com`)
    await b.useSession(user.cookie)
    return user
  }

  it('password login, register a labelled passkey, sign out, sign back in with it', async () => {
    const user = await b.h.seedUser('Browser', `browser-${crypto.randomUUID()}@example.com`)
    await b.context.clearCookies()
    const login = await run<Call>('login', user.email, PASSWORD)
    expect(login.status).toBe(200)
    expect(await sessionUserId()).toBe(user.id)

    const reg = await register('Laptop')
    expect(reg.ceremony).toBeUndefined()
    expect(reg.verify).toEqual({ status: 200, body: { ok: true } })
    expect(reg.options.options.rp.id).toBe('localhost')
    const [row] = await rowsOf(user.id)
    expect(row).toMatchObject({ id: reg.credential!.id, label: 'Laptop', userId: user.id, lastUsedAt: null })

    expect((await run<Call>('signOut')).status).toBe(200)
    expect(await sessionUserId()).toBeNull()

    const auth = await signIn(user.email.toUpperCase())
    // No ids listed: the browser finds its discoverable passkey for this site by itself.
    expect(auth.options.options.allowCredentials).toEqual([])
    expect(auth.verify).toEqual({ status: 200, body: { ok: true, user: { id: user.id, name: 'Browser' } } })
    expect(await sessionUserId()).toBe(user.id)

    const [after] = await rowsOf(user.id)
    const [cred] = await credentials()
    expect(after.counter).toBe(cred.signCount)
    expect(after.counter).toBeGreaterThan(row.counter)
    expect(after.lastUsedAt).toBeInstanceOf(Date)
  }, 60_000)

  it('a replayed challenge → 400, for registration and for sign-in', async () => {
    const user = await freshUser('Replay')
    const reg = await register('Replay')
    expect(reg.verify!.status).toBe(200)
    const again = await api('/api/passkey/register/verify', { credential: reg.credential, challenge: reg.options.challenge })
    expect(again).toEqual({ status: 400, body: { error: 'Invalid or expired challenge', code: 'CHALLENGE_INVALID' } })
    expect(await rowsOf(user.id)).toHaveLength(1)

    await run('signOut')
    const auth = await signIn(user.email)
    expect(auth.verify!.status).toBe(200)
    await run('signOut')
    const replay = await api('/api/passkey/auth/verify', { credential: auth.credential, challenge: auth.options.challenge })
    expect(replay).toEqual({ status: 400, body: { error: 'Invalid or expired challenge', code: 'CHALLENGE_INVALID' } })
    expect(await sessionUserId()).toBeNull()
  }, 60_000)

  it('a challenge other than the one signed → 400; the signed one still works', async () => {
    const user = await freshUser('Wrong')
    const a = (await api('/api/passkey/register/options', {})).body
    const other = (await api('/api/passkey/register/options', {})).body
    const made = await run<{ ok: boolean; credential: unknown }>('create', a.options)
    expect(made.ok).toBe(true)
    const wrong = await api('/api/passkey/register/verify', { credential: made.credential, challenge: other.challenge })
    expect(wrong).toEqual({ status: 400, body: { error: 'Challenge does not match the credential', code: 'CHALLENGE_MISMATCH' } })
    expect(await rowsOf(user.id)).toEqual([])
    expect((await api('/api/passkey/register/verify', { credential: made.credential, challenge: a.challenge })).status).toBe(200)

    await run('signOut')
    const x = (await api('/api/passkey/auth/options', { identifier: user.email })).body
    const y = (await api('/api/passkey/auth/options', { identifier: user.email })).body
    const got = await run<{ ok: boolean; credential: unknown }>('get', x.options)
    expect(got.ok).toBe(true)
    const mismatch = await api('/api/passkey/auth/verify', { credential: got.credential, challenge: y.challenge })
    expect(mismatch.status).toBe(400)
    expect(mismatch.body.code).toBe('CHALLENGE_MISMATCH')
    expect(await sessionUserId()).toBeNull()
    expect((await api('/api/passkey/auth/verify', { credential: got.credential, challenge: x.challenge })).status).toBe(200)
    expect(await sessionUserId()).toBe(user.id)
  }, 60_000)

  it('user verification off: the browser refuses required UV; a client that skips it is refused by the server', async () => {
    const user = await freshUser('NoUv')
    await setUserVerified(false)
    expect((await register('x')).ceremony).toMatchObject({ ok: false, name: 'NotAllowedError' })
    // Chromium creates nothing unverified on a UV-capable authenticator, so one without UV plays the
    // client that skips it (options asking for less).
    await b.removeAuthenticator(authenticatorId)
    authenticatorId = await b.addAuthenticator({ hasUserVerification: false, isUserVerified: false })
    const unverified = await register('x', { authenticatorSelection: { residentKey: 'preferred', userVerification: 'discouraged' } })
    expect(unverified.credential).toBeDefined()
    expect(unverified.verify).toEqual({ status: 400, body: { error: 'Passkey verification failed', code: 'PASSKEY_VERIFICATION_FAILED' } })
    expect(await rowsOf(user.id)).toEqual([])

    await b.removeAuthenticator(authenticatorId)
    authenticatorId = await b.addAuthenticator()
    expect((await register('verified')).verify!.status).toBe(200)
    await run('signOut')
    await setUserVerified(false)
    expect((await signIn(user.email)).ceremony).toMatchObject({ ok: false, name: 'NotAllowedError' })
    const skipped = await signIn(user.email, { userVerification: 'discouraged' })
    expect(skipped.credential).toBeDefined()
    expect(skipped.verify).toEqual({ status: 401, body: { error: 'Passkey sign-in failed', code: 'PASSKEY_AUTH_FAILED' } })
    expect(await sessionUserId()).toBeNull()
  }, 60_000)

  it('the same credential twice: the browser honours excludeCredentials, and the server refuses it anyway', async () => {
    const user = await freshUser('Twice')
    const first = await register('first')
    expect(first.verify!.status).toBe(200)
    const second = await register('second')
    expect(second.ceremony).toMatchObject({ ok: false, name: 'InvalidStateError', code: 'ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED' })
    expect(second.options.options.excludeCredentials.map((c: { id: string }) => c.id)).toEqual([first.credential!.id])

    // A client that ignores excludeCredentials: the same key pair re-registered over a fresh challenge.
    const [cred] = await credentials()
    const clone = SoftAuthenticator.fromCdp({ origin: b.origin, rpId: 'localhost' }, cred)
    expect(clone.id).toBe(first.credential!.id)
    const fresh = (await api('/api/passkey/register/options', {})).body
    const res = await api('/api/passkey/register/verify', { credential: clone.register({ challenge: fresh.options.challenge }), challenge: fresh.challenge, label: 'dup' })
    expect(res).toEqual({ status: 400, body: { error: 'Passkey already registered', code: 'PASSKEY_EXISTS' } })
    expect((await rowsOf(user.id)).map((r) => r.label)).toEqual(['first'])
  }, 60_000)

  it('a stored counter above the authenticator\'s → sign-in refused; the real counter signs in', async () => {
    const user = await freshUser('Counter')
    expect((await register('k')).verify!.status).toBe(200)
    await run('signOut')
    const [cred] = await credentials()
    await b.h.db.update(passkeys).set({ counter: cred.signCount + 1000 }).where(eq(passkeys.userId, user.id))
    const refused = await signIn(user.email)
    expect(refused.credential).toBeDefined()
    expect(refused.verify).toEqual({ status: 401, body: { error: 'Passkey sign-in failed', code: 'PASSKEY_AUTH_FAILED' } })
    expect(await sessionUserId()).toBeNull()

    await b.h.db.update(passkeys).set({ counter: (await credentials())[0].signCount }).where(eq(passkeys.userId, user.id))
    expect((await signIn(user.email)).verify!.status).toBe(200)
    expect(await sessionUserId()).toBe(user.id)
  }, 60_000)

  it("an unknown email's options sign no one in, though the browser offers its discoverable passkey", async () => {
    await freshUser('Ghost')
    expect((await register('k')).verify!.status).toBe(200)
    await run('signOut')
    const ghost = await signIn(`ghost-${crypto.randomUUID()}@example.com`)
    expect(ghost.options.options.allowCredentials).toEqual([])
    expect(ghost.credential).toBeDefined()
    expect(ghost.verify!.status).toBe(401)
    expect(await sessionUserId()).toBeNull()
  }, 60_000)
})
