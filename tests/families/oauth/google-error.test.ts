import { eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { accounts, sessions, users } from '../../../schema'
import { useFixture, useHarness } from '../../support/harness'
import { startOidcServer } from '../../support/oidc-server'
import { authorize, callback, cookieFrom, googleEnv, landing, signInWithGoogle, startSignIn } from './helpers'

const oidc = useFixture(() => startOidcServer())
const h = useHarness(() => ({ env: googleEnv(oidc) })) // no PUBLIC_URL: the request's origin

const userCount = async () => (await h.db.select({ id: users.id }).from(users)).length

describe('google sign-in: errors end on /login?error=<code>, never JSON', () => {
  it('without PUBLIC_URL the redirect URI is the request origin', async () => {
    const { url } = await startSignIn(h)
    expect(url.searchParams.get('redirect_uri')).toBe('http://localhost/api/auth/google/callback')
  })

  it('error=access_denied is passed through and the token endpoint is never called', async () => {
    const tokenCalls = oidc.count('/token')
    const { state, cookie } = await startSignIn(h)
    const res = await callback(h, { error: 'access_denied', state }, cookie)
    expect(landing(res)).toBe('error:access_denied')
    expect(res.headers.get('location')).toBe('http://localhost:3000/login?error=access_denied')
    expect(oidc.count('/token')).toBe(tokenCalls)
    // The state was consumed with it: it cannot be used afterwards.
    expect(landing(await callback(h, { code: 'x', state }, cookie))).toBe('error:InvalidState')
    expect(oidc.count('/token')).toBe(tokenCalls)
  })

  it('an unknown or hostile provider error becomes OAuthCallbackError; a code next to an error is ignored', async () => {
    const tokenCalls = oidc.count('/token')
    for (const error of ['<script>alert(1)</script>', 'ACCESS_DENIED', 'x'.repeat(200)]) {
      const { state, cookie } = await startSignIn(h)
      expect(landing(await callback(h, { error, state, code: 'abc' }, cookie))).toBe('error:OAuthCallbackError')
    }
    expect(landing(await callback(h, { error: 'access_denied' }))).toBe('error:access_denied')
    expect(oidc.count('/token')).toBe(tokenCalls)
  })

  it('missing state → InvalidState; a valid state without a code → OAuthCallbackError', async () => {
    expect(landing(await callback(h, { code: 'abc' }))).toBe('error:InvalidState')
    expect(landing(await callback(h, {}))).toBe('error:InvalidState')
    const { state, cookie } = await startSignIn(h)
    expect(landing(await callback(h, { state }, cookie))).toBe('error:OAuthCallbackError')
  })

  it('a malformed query (repeated or oversized parameters) still redirects', async () => {
    const repeated = await h.web.request('/api/auth/google/callback?state=a&state=b&code=c')
    expect(landing(repeated)).toBe('error:OAuthCallbackError')
    const huge = await callback(h, { code: 'c'.repeat(5000), state: 's' })
    expect(landing(huge)).toBe('error:OAuthCallbackError')
  })

  it('a code the provider refuses → TokenExchangeFailed', async () => {
    const { state, cookie } = await startSignIn(h)
    expect(landing(await callback(h, { code: 'never-issued', state }, cookie))).toBe('error:TokenExchangeFailed')
  })

  it('unverified or missing email → EmailNotVerified, and nobody is signed in or created', async () => {
    const users0 = await userCount()
    const unverified = await signInWithGoogle(h, oidc, { sub: 'sub-unverified', email: 'unverified@example.com', email_verified: false, name: 'U' })
    expect(landing(unverified.res)).toBe('error:EmailNotVerified')
    expect(cookieFrom(unverified.res, 'service-session')).toBeUndefined()
    const noEmail = await signInWithGoogle(h, oidc, { sub: 'sub-noemail', name: 'N' })
    expect(landing(noEmail.res)).toBe('error:EmailNotVerified')
    const stringy = await signInWithGoogle(h, oidc, { sub: 'sub-stringy', email: 's@example.com', email_verified: 'no' as unknown as boolean })
    expect(landing(stringy.res)).toBe('error:EmailNotVerified')
    expect(await userCount()).toBe(users0)
    expect(await h.db.select().from(accounts).where(eq(accounts.providerAccountId, 'sub-unverified'))).toEqual([])
  })

  it('a disabled account link → AccountDisabled: no session, no new user', async () => {
    const { bob } = h.users
    await h.db.insert(accounts).values({ userId: bob.id, provider: 'google', providerAccountId: 'sub-bob', email: bob.email, signInDisabled: true })
    const sessions0 = (await h.db.select().from(sessions).where(eq(sessions.userId, bob.id))).length
    const users0 = await userCount()
    const { res } = await signInWithGoogle(h, oidc, { sub: 'sub-bob', email: bob.email, email_verified: true, name: 'Bob' })
    expect(landing(res)).toBe('error:AccountDisabled')
    expect(cookieFrom(res, 'service-session')).toBeUndefined()
    expect(await h.db.select().from(sessions).where(eq(sessions.userId, bob.id))).toHaveLength(sessions0)
    expect(await userCount()).toBe(users0)
  })

  it('a code from another flow fails PKCE at the provider → TokenExchangeFailed', async () => {
    oidc.setIdentity({ sub: 'sub-pkce', email: 'pkce@example.com', email_verified: true })
    const a = await startSignIn(h)
    const b = await startSignIn(h)
    const codeForA = (await authorize(a.url)).searchParams.get('code')!
    expect(landing(await callback(h, { code: codeForA, state: b.state }, b.cookie))).toBe('error:TokenExchangeFailed')
  })
})
