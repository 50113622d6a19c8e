import { eq } from 'drizzle-orm'
import { expect } from 'vitest'
import type { LocalQueue } from '../../../infra/local-queue'
import { accounts, mailOutbox } from '../../../schema'
import type { Harness } from '../../support/harness'
import type { IdentityClaims, OidcServer } from '../../support/oidc-server'

export const CLIENT_ID = 'test-client.apps.googleusercontent.com'
export const CLIENT_SECRET = 'test-client-secret'
export const OTHER_CLIENT_ID = 'other-client.apps.googleusercontent.com'
export const DASHBOARD = 'http://localhost:3000'
export const RISC = 'https://schemas.openid.net/secevent/risc/event-type/'

/** Harness env pointing Google at the loopback provider. */
export const googleEnv = (oidc: OidcServer, extra: Record<string, string> = {}) => ({
  GOOGLE_CLIENT_ID: CLIENT_ID,
  GOOGLE_CLIENT_SECRET: CLIENT_SECRET,
  GOOGLE_ISSUER: oidc.url,
  GOOGLE_DISCOVERY_URL: oidc.discoveryUrl,
  GOOGLE_CLIENT_IDS: OTHER_CLIENT_ID,
  ...extra,
})

/** The `name=value` of a Set-Cookie named `name`, or undefined. */
export const cookieFrom = (res: Response, name: string) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .find((c) => c.startsWith(`${name}=`) && c.length > name.length + 1)

export const location = (res: Response) => new URL(res.headers.get('location') ?? 'about:blank')

/** `GET /api/auth/google`: the authorize URL, its state, and the state cookie this browser got. */
export async function startSignIn(h: Harness) {
  const res = await h.web.request('/api/auth/google')
  expect(res.status).toBe(302)
  const url = location(res)
  return { res, url, state: url.searchParams.get('state') ?? '', cookie: cookieFrom(res, 'google-oauth-state') ?? '' }
}

/** Follows the provider's authorize endpoint (the user consents): the callback URL with `code` and `state`. */
export async function authorize(url: URL) {
  const res = await fetch(url, { redirect: 'manual' })
  expect(res.status).toBe(302)
  return location(res)
}

export const callback = (h: Harness, params: Record<string, string> | URLSearchParams, cookie?: string) =>
  h.web.request(`/api/auth/google/callback?${new URLSearchParams(params)}`, { headers: cookie ? { cookie } : {} })

/** The whole browser round trip for `identity`: start, consent at the provider, callback with the state cookie. */
export async function signInWithGoogle(h: Harness, oidc: OidcServer, identity: IdentityClaims) {
  oidc.setIdentity(identity)
  const start = await startSignIn(h)
  const back = await authorize(start.url)
  const res = await callback(h, back.searchParams, start.cookie)
  return { res, start, back }
}

/** Where a callback sent the browser: `/dashboard` or the login error code. */
export function landing(res: Response) {
  expect(res.status).toBe(302)
  const url = location(res)
  expect(url.origin).toBe(DASHBOARD)
  return url.pathname === '/login' ? `error:${url.searchParams.get('error')}` : url.pathname
}

export const welcomeMails = async (h: Harness, email: string) =>
  (await h.db.select().from(mailOutbox).where(eq(mailOutbox.to, email.toLowerCase()))).filter((m) => m.kind === 'welcome')

export const googleAccounts = (h: Harness, sub: string) => h.db.select().from(accounts).where(eq(accounts.providerAccountId, sub))

/**
 * Waits until the in-process queue has delivered everything due within a minute (RISC processing runs there; a
 * permission request's expiry, 10 minutes out, is not waited for).
 */
export const queueIdle = (h: Harness) => (h.services.queue as LocalQueue).idle({ dueWithinMs: 60_000 })

/** POSTs a security event token as Google does. */
export const postRisc = (h: Harness, token: string, contentType = 'application/secevent+jwt') =>
  h.web.request('/api/security/risc', { method: 'POST', headers: { 'content-type': contentType }, body: token })

let seq = 0
/** A RISC security event token signed by the provider: one event about `subject`, Google's claim layout. */
export function riscToken(
  oidc: OidcServer,
  event: string,
  subject: Record<string, unknown> | undefined,
  extra: { reason?: string; claims?: Record<string, unknown>; kid?: string; jti?: string } = {},
) {
  const body: Record<string, unknown> = subject ? { subject } : { state: 'verify-me' }
  if (extra.reason) body.reason = extra.reason
  return oidc.sign(
    {
      aud: CLIENT_ID,
      jti: extra.jti ?? `jti-${Date.now()}-${++seq}-${Math.random().toString(16).slice(2)}`,
      events: { [`${RISC}${event}`]: body },
      ...extra.claims,
    },
    { kid: extra.kid },
  )
}

export const issSub = (oidc: OidcServer, sub: string) => ({ subject_type: 'iss-sub', iss: `${oidc.url}/`, sub })
