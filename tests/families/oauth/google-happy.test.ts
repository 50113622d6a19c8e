import { eq } from 'drizzle-orm'
import { base64url, decodeJwt } from 'jose'
import { describe, expect, it } from 'vitest'
import { sessions, users } from '../../../schema'
import { useFixture, useHarness } from '../../support/harness'
import { startOidcServer } from '../../support/oidc-server'
import {
  CLIENT_ID,
  CLIENT_SECRET,
  cookieFrom,
  DASHBOARD,
  googleAccounts,
  googleEnv,
  landing,
  signInWithGoogle,
  startSignIn,
  welcomeMails,
} from './helpers'

const PUBLIC_URL = 'https://api.example.test'

const oidc = useFixture(() => startOidcServer())
const h = useHarness(() => ({ env: googleEnv(oidc, { PUBLIC_URL }) }))

describe('google sign-in: happy paths', () => {
  it("start → 302 to the provider's authorize endpoint with exactly the documented parameters", async () => {
    const { res, url, state, cookie } = await startSignIn(h)
    expect(`${url.origin}${url.pathname}`).toBe(`${oidc.url}/authorize`)
    expect([...url.searchParams.keys()].sort()).toEqual(
      ['access_type', 'client_id', 'code_challenge', 'code_challenge_method', 'nonce', 'prompt', 'redirect_uri', 'response_type', 'scope', 'state'].sort(),
    )
    const p = Object.fromEntries(url.searchParams)
    expect(p).toMatchObject({
      response_type: 'code',
      client_id: CLIENT_ID,
      redirect_uri: `${PUBLIC_URL}/api/auth/google/callback`,
      scope: 'openid email profile',
      access_type: 'offline',
      prompt: 'select_account',
      code_challenge_method: 'S256',
    })
    // A compact JWT (lib/auth/signed-token.ts) naming the stored flow by its `jti`.
    expect(p.state).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/)
    const stateId = decodeJwt(p.state).jti
    expect(p.nonce).toMatch(/^[0-9a-f]{32}$/)
    expect(p.code_challenge).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(res.headers.get('cache-control')).toBe('no-store')
    // The state is bound to this browser by an HttpOnly cookie scoped to the sign-in paths.
    expect(cookie).toBe(`google-oauth-state=${state}`)
    const raw = res.headers.getSetCookie().find((c) => c.startsWith('google-oauth-state='))!
    expect(raw).toMatch(/HttpOnly/)
    expect(raw).toMatch(/SameSite=Lax/)
    expect(raw).toMatch(/Path=\/api\/auth\/google(;|$)/)
    expect(raw).toMatch(/Max-Age=600/)
    // The challenge is S256 of the verifier kept server-side with the nonce.
    const pending = await h.services.kv.get<{ verifier: string; nonce: string; redirectUri: string }>(`oauth:google:state:${stateId}`)
    expect(pending?.nonce).toBe(p.nonce)
    expect(pending?.redirectUri).toBe(p.redirect_uri)
    const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(pending!.verifier))
    expect(base64url.encode(new Uint8Array(digest))).toBe(p.code_challenge)
  })

  it('callback: creates the user, links the account with its tokens, mails the welcome once, starts a session, → /dashboard', async () => {
    const email = 'grace@example.com'
    const before = oidc.tokenRequests.length
    const { res } = await signInWithGoogle(h, oidc, { sub: 'google-sub-grace', email, email_verified: true, name: 'Grace Hopper' })
    expect(landing(res)).toBe('/dashboard')
    expect(res.headers.get('location')).toBe(`${DASHBOARD}/dashboard`)

    // The code was exchanged once, with the client secret, the PKCE verifier and the same redirect URI.
    expect(oidc.tokenRequests.length).toBe(before + 1)
    const sent = oidc.tokenRequests.at(-1)!
    expect(sent).toMatchObject({
      grant_type: 'authorization_code',
      client_id: CLIENT_ID,
      redirect_uri: `${PUBLIC_URL}/api/auth/google/callback`,
    })
    expect((sent as unknown as Record<string, unknown>).client_secret).toBe(CLIENT_SECRET)
    expect(sent.code_verifier).toMatch(/^[A-Za-z0-9_-]{43}$/)

    const [user] = await h.db.select().from(users).where(eq(users.email, email))
    expect(user).toMatchObject({ name: 'Grace Hopper', passwordHash: null })
    const linked = await googleAccounts(h, 'google-sub-grace')
    expect(linked).toHaveLength(1)
    expect(linked[0]).toMatchObject({ userId: user.id, provider: 'google', email, signInDisabled: false, scope: expect.any(String) })
    expect(linked[0].accessToken).toBeTruthy()
    expect(linked[0].refreshToken).toBeTruthy()
    expect(linked[0].expiresAt!.getTime()).toBeGreaterThan(Date.now())
    expect(await welcomeMails(h, email)).toHaveLength(1)

    // The session cookie is the email login's; the state cookie is cleared.
    const session = cookieFrom(res, 'service-session')!
    expect(session).toBeTruthy()
    expect(cookieFrom(res, 'google-oauth-state')).toBeUndefined()
    expect(res.headers.getSetCookie().some((c) => c.startsWith('google-oauth-state=;') && /Max-Age=0/.test(c))).toBe(true)
    const me = (await (await h.web.request('/api/auth/session', { headers: { cookie: session } })).json()) as { user: { id: string } }
    expect(me.user.id).toBe(user.id)
  })

  it('a second sign-in finds the same user: no new user, no second account record, no second welcome, a new session', async () => {
    const email = 'linus@example.com'
    const identity = { sub: 'google-sub-linus', email, email_verified: true, name: 'Linus' }
    expect(landing((await signInWithGoogle(h, oidc, identity)).res)).toBe('/dashboard')
    const [first] = await googleAccounts(h, 'google-sub-linus')

    const again = await signInWithGoogle(h, oidc, { ...identity, email: 'LINUS@example.com' })
    expect(landing(again.res)).toBe('/dashboard')
    expect(await h.db.select().from(users).where(eq(users.email, email))).toHaveLength(1)
    const linked = await googleAccounts(h, 'google-sub-linus')
    expect(linked).toEqual([first]) // untouched, not duplicated
    expect(await welcomeMails(h, email)).toHaveLength(1)
    expect(await h.db.select().from(sessions).where(eq(sessions.userId, first.userId))).toHaveLength(2)
  })

  it('an existing email user is linked, not duplicated, and gets no welcome mail', async () => {
    const { alice } = h.users
    const { res } = await signInWithGoogle(h, oidc, { sub: 'google-sub-alice', email: alice.email.toUpperCase(), email_verified: true, name: 'Someone Else' })
    expect(landing(res)).toBe('/dashboard')
    const [account] = await googleAccounts(h, 'google-sub-alice')
    expect(account.userId).toBe(alice.id)
    const [row] = await h.db.select().from(users).where(eq(users.id, alice.id))
    expect(row.name).toBe('Alice') // the existing profile stays
    expect(await welcomeMails(h, alice.email)).toHaveLength(0)
    const me = (await (await h.web.request('/api/auth/session', { headers: { cookie: cookieFrom(res, 'service-session')! } })).json()) as {
      user: { id: string }
    }
    expect(me.user.id).toBe(alice.id)
  })

  it('the discovery document is fetched once and cached', async () => {
    expect(oidc.count('/.well-known/openid-configuration')).toBe(1)
  })

  it('the routes are documented', async () => {
    const doc = (await (await h.web.request('/api/openapi.json')).json()) as { paths: Record<string, Record<string, unknown>> }
    expect(Object.keys(doc.paths['/api/auth/google'])).toEqual(['get'])
    expect(Object.keys(doc.paths['/api/auth/google/callback'])).toEqual(['get'])
    expect(Object.keys(doc.paths['/api/security/risc']).sort()).toEqual(['get', 'post'])
  })
})
