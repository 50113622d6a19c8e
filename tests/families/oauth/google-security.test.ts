import { eq } from 'drizzle-orm'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { users } from '../../../schema'
import { useFixture, useHarness } from '../../support/harness'
import { startOidcServer } from '../../support/oidc-server'
import { authorize, callback, CLIENT_ID, cookieFrom, googleEnv, landing, signInWithGoogle, startSignIn } from './helpers'

const oidc = useFixture(() => startOidcServer())
const h = useHarness(() => ({ env: googleEnv(oidc) }))
afterEach(() => {
  oidc.override({})
  vi.useRealTimers()
})

const identity = (n: string) => ({ sub: `sub-${n}`, email: `${n}@example.com`, email_verified: true, name: n })
const userExists = async (email: string) => (await h.db.select().from(users).where(eq(users.email, email))).length > 0

describe('google sign-in: state', () => {
  it('a replayed state (same code, state and cookie) → InvalidState, with no second token exchange', async () => {
    const first = await signInWithGoogle(h, oidc, identity('replay'))
    expect(landing(first.res)).toBe('/dashboard')
    const tokenCalls = oidc.count('/token')
    const again = await callback(h, first.back.searchParams, first.start.cookie)
    expect(landing(again)).toBe('error:InvalidState')
    expect(cookieFrom(again, 'service-session')).toBeUndefined()
    expect(oidc.count('/token')).toBe(tokenCalls)
  })

  it('a forged state (right shape, wrong signature) → InvalidState and leaves the real flow usable', async () => {
    oidc.setIdentity(identity('forged'))
    const start = await startSignIn(h)
    const back = await authorize(start.url)
    const [header, payload, signature] = start.state.split('.')
    const forged = `${header}.${payload}.${'A'.repeat(signature.length)}`
    expect(landing(await callback(h, { code: back.searchParams.get('code')!, state: forged }, `google-oauth-state=${forged}`))).toBe('error:InvalidState')
    const otherId = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), jti: 'f'.repeat(32) })).toString('base64url')
    for (const state of ['nonsense', payload, `${header}.${payload}.`, `${header}.${otherId}.${signature}`]) {
      expect(landing(await callback(h, { code: 'c', state }, `google-oauth-state=${state}`))).toBe('error:InvalidState')
    }
    expect(landing(await callback(h, back.searchParams, start.cookie))).toBe('/dashboard')
  })

  it("another browser's state (no cookie, or a different one) → InvalidState, and the real browser can still finish", async () => {
    oidc.setIdentity(identity('planted'))
    const victim = await startSignIn(h)
    const other = await startSignIn(h)
    const back = await authorize(victim.url)
    expect(landing(await callback(h, back.searchParams))).toBe('error:InvalidState')
    expect(landing(await callback(h, back.searchParams, other.cookie))).toBe('error:InvalidState')
    expect(await userExists('planted@example.com')).toBe(false)
    expect(landing(await callback(h, back.searchParams, victim.cookie))).toBe('/dashboard')
  })

  it('an expired state (older than 10 minutes) → InvalidState', async () => {
    oidc.setIdentity(identity('expired'))
    const start = await startSignIn(h)
    const back = await authorize(start.url)
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(Date.now() + 10 * 60_000 + 1000)
    expect(landing(await callback(h, back.searchParams, start.cookie))).toBe('error:InvalidState')
    vi.useRealTimers()
    expect(await userExists('expired@example.com')).toBe(false)
  })
})

describe('google sign-in: the ID token', () => {
  it('wrong audience → InvalidIdToken, nobody created', async () => {
    oidc.override({ aud: 'someone-elses-client' })
    const { res } = await signInWithGoogle(h, oidc, identity('wrongaud'))
    expect(landing(res)).toBe('error:InvalidIdToken')
    expect(await userExists('wrongaud@example.com')).toBe(false)
  })

  it('an extra audience with another authorized party → InvalidIdToken', async () => {
    oidc.override({ aud: [CLIENT_ID, 'other'], azp: 'other' })
    expect(landing((await signInWithGoogle(h, oidc, identity('azp'))).res)).toBe('error:InvalidIdToken')
  })

  it('wrong nonce, or none → InvalidIdToken', async () => {
    oidc.override({ nonce: 'not-the-nonce-we-sent' })
    expect(landing((await signInWithGoogle(h, oidc, identity('nonce'))).res)).toBe('error:InvalidIdToken')
    oidc.override({ nonce: undefined }) // the claim is left out
    expect(landing((await signInWithGoogle(h, oidc, identity('nonce'))).res)).toBe('error:InvalidIdToken')
    expect(await userExists('nonce@example.com')).toBe(false)
  })

  it('wrong issuer, or expired → InvalidIdToken', async () => {
    oidc.override({ iss: 'https://evil.example' })
    expect(landing((await signInWithGoogle(h, oidc, identity('iss'))).res)).toBe('error:InvalidIdToken')
    const past = Math.floor(Date.now() / 1000) - 3600
    oidc.override({ iat: past - 60, nbf: past - 60, exp: past })
    expect(landing((await signInWithGoogle(h, oidc, identity('exp'))).res)).toBe('error:InvalidIdToken')
  })
})
