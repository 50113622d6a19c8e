import type { Context } from 'hono'
import type { Config } from '../../lib/config'
import type { AppEnv } from '../../lib/context'
import { getGoogleDiscovery, googleClient } from '../../lib/oidc/google'

/**
 * Every way a Google sign-in can fail, as the `error` the dashboard's `/login` page receives. The callback
 * never answers JSON or a 500 page: each failure is a 302 to `${baseUrl}/login?error=<code>`.
 */
export const LOGIN_ERRORS = [
  'GoogleNotConfigured', // no client id/secret (or no session secret to sign the state)
  'GoogleUnavailable', // discovery or JWKS unreachable
  'InvalidState', // missing, forged, replayed, expired, or not this browser's state
  'OAuthCallbackError', // the provider sent an error we do not pass through, no code, or an unexpected failure
  'TokenExchangeFailed', // the token endpoint refused the code (or was unreachable)
  'InvalidIdToken', // signature, issuer, audience, expiry or nonce
  'EmailNotVerified', // no email, or `email_verified` is not true
  'AccountDisabled', // the Google account link has `signInDisabled` (RISC account-disabled)
  'AccountLinkRefused', // an existing account may not be linked to this identity (lib/auth/sign-in.ts rules)
] as const
export type LoginError = (typeof LOGIN_ERRORS)[number]

/** Errors the provider may put on the callback (RFC 6749 §4.1.2.1, OIDC Core §3.1.2.6) that are passed through as-is. */
const PROVIDER_ERRORS = new Set([
  'access_denied',
  'invalid_request',
  'unauthorized_client',
  'unsupported_response_type',
  'invalid_scope',
  'server_error',
  'temporarily_unavailable',
  'interaction_required',
  'login_required',
  'account_selection_required',
  'consent_required',
])
export const providerError = (error: string) => (PROVIDER_ERRORS.has(error) ? error : 'OAuthCallbackError')

/** Thrown inside the sign-in flow; the route turns it into the `/login?error=` redirect. */
export class SignInFailure extends Error {
  constructor(readonly code: string) {
    super(code)
  }
}

/** The dashboard (first APP_ORIGIN) is where the browser lands, success or not (the sign-in routes declare `noStore`). */
export function loginRedirect(c: Context<AppEnv>, code: string) {
  return c.redirect(`${c.var.services.config.baseUrl}/login?error=${encodeURIComponent(code)}`, 302)
}

/** Sign-in needs the client id and secret, and the session secret that signs the state (lib/oidc/google.ts). */
export { googleClient }

/** The audiences a RISC token may name: the sign-in client and any further client ids of the project. */
export const riscAudiences = (config: Config) => [...new Set([config.GOOGLE_CLIENT_ID, ...config.GOOGLE_CLIENT_IDS].filter((v): v is string => !!v))]

export const googleDiscovery = (c: Context<AppEnv>) => getGoogleDiscovery(c.var.services.kv, c.var.services.config)

/**
 * The registered redirect URI: PUBLIC_URL (this service's public base, as the queue receivers use) when
 * set, else the request's own origin. It is stored with the state, so the token exchange repeats it exactly.
 */
export function callbackUrl(c: Context<AppEnv>) {
  const base = c.var.services.config.PUBLIC_URL ?? new URL(c.req.url).origin
  return `${base.replace(/\/+$/, '')}/api/auth/google/callback`
}
