import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { errors } from 'jose'
import type { Context } from 'hono'
import { signInWithIdentity } from '../../../lib/auth/sign-in'
import type { AppEnv } from '../../../lib/context'
import { noStore } from '../../../lib/http/no-store'
import { timingSafeEqual } from '../../../lib/crypto'
import { deadline } from '../../../lib/deadline'
import { ApiError } from '../../../lib/http/errors'
import { issuerVariants, OidcUnavailableError, verifyProviderJwt, type Discovery } from '../oidc'
import { googleClient, googleDiscovery, loginRedirect, providerError, SignInFailure } from '../google'
import { consumeState, type PendingSignIn } from '../state'
import { errorFields, log } from '../../../lib/log'

const Query = z.object({
  code: z.string().max(2048).optional(),
  state: z.string().max(256).optional(),
  error: z.string().max(256).optional(),
})

export const route = createRoute({
  method: 'get',
  path: '/api/auth/google/callback',
  operationId: 'finishGoogleSignIn',
  security: [],
  middleware: [noStore] as const,
  tags: ['Auth'],
  summary: 'Google sign-in callback',
  description:
    'Checks the state (signature, this browser, once, 10 minutes), exchanges the code with the PKCE verifier, ' +
    'verifies the ID token (RS256 via JWKS, issuer, audience, expiry, nonce), requires a verified email, then signs ' +
    'in: a Google `sub` already linked signs in its own user whatever email it now carries; else the user with the ' +
    'email is linked (an unverified password account with that email is taken over by the Google owner: its ' +
    'password, sessions, API keys, passkeys and other links are removed) or created with a verified email; the ' +
    'Google account is linked once. Then 302 to `/dashboard`. Every ' +
    'failure is a 302 to `/login?error=<code>`: GoogleNotConfigured, GoogleUnavailable, InvalidState, ' +
    'OAuthCallbackError (or a provider error such as `access_denied`), TokenExchangeFailed, InvalidIdToken, ' +
    'EmailNotVerified, AccountDisabled, AccountLinkRefused.',
  request: { query: Query },
  responses: {
    302: { description: 'To the dashboard, or to `/login?error=<code>`' },
  },
})

/** Even a malformed query ends on the login page, never as a JSON 400. */
export const hook = (result: { success: boolean }, c: Context<AppEnv>) =>
  result.success ? undefined : loginRedirect(c, 'OAuthCallbackError')

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  try {
    return await complete(c, c.req.valid('query'))
  } catch (e) {
    if (e instanceof SignInFailure) return loginRedirect(c, e.code)
    log.error('oauth.google_callback_failed', { ...(e instanceof OidcUnavailableError ? { dependency: 'google' } : {}), requestId: c.var.requestId, ...errorFields(e) })
    return loginRedirect(c, e instanceof OidcUnavailableError ? 'GoogleUnavailable' : 'OAuthCallbackError')
  }
}

async function complete(c: Context<AppEnv>, query: z.infer<typeof Query>) {
  const { config } = c.var.services
  const client = googleClient(config)
  if (!client) throw new SignInFailure('GoogleNotConfigured')
  // The state is spent either way (single use); a provider error then wins over a bad state. Neither reaches the token endpoint.
  const pending = await consumeState(c, client.sessionSecret, query.state)
  if (query.error) throw new SignInFailure(providerError(query.error))
  if (!pending) throw new SignInFailure('InvalidState')
  if (!query.code) throw new SignInFailure('OAuthCallbackError')

  const discovery = await googleDiscovery(c)
  const tokens = await exchangeCode(discovery, client, query.code, pending)
  const claims = await verifyIdToken(c, discovery, client.id, tokens.id_token, pending)
  // Some Google tokens have carried the flag as the string "true".
  if (typeof claims.email !== 'string' || !(claims.email_verified === true || claims.email_verified === 'true')) {
    throw new SignInFailure('EmailNotVerified')
  }

  const name = typeof claims.name === 'string' ? claims.name : null
  const providerTokens = {
    accessToken: tokens.access_token ?? null,
    refreshToken: tokens.refresh_token ?? null,
    expiresAt: tokens.expires_in ? new Date(Date.now() + tokens.expires_in * 1000) : null,
    scope: tokens.scope ?? null,
  }
  try {
    // Only a verified email reaches here, so Google vouches for it (linking rules: lib/auth/sign-in.ts).
    await signInWithIdentity(c, { provider: 'google', subject: claims.sub, email: claims.email, emailVerified: true, name, tokens: providerTokens })
  } catch (e) {
    if (e instanceof ApiError && e.code === 'ACCOUNT_DISABLED') throw new SignInFailure('AccountDisabled')
    if (e instanceof ApiError && e.code === 'ACCOUNT_LINK_REFUSED') throw new SignInFailure('AccountLinkRefused')
    throw e
  }
  return c.redirect(`${config.baseUrl}/dashboard`, 302)
}

const TokenResponse = z.object({
  id_token: z.string().min(1),
  access_token: z.string().optional(),
  refresh_token: z.string().optional(),
  expires_in: z.coerce.number().positive().optional(),
  scope: z.string().optional(),
})

/** Authorization code + PKCE verifier at the token endpoint, client authenticated with client_secret_post. */
async function exchangeCode(discovery: Discovery, client: { id: string; secret: string; timeoutMs: number }, code: string, pending: PendingSignIn) {
  const body = new URLSearchParams({
    grant_type: 'authorization_code',
    code,
    redirect_uri: pending.redirectUri,
    client_id: client.id,
    client_secret: client.secret,
    code_verifier: pending.verifier,
  })
  const bound = deadline(client.timeoutMs)
  try {
    const res = await fetch(discovery.token_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body,
      signal: bound.signal,
    })
    if (!res.ok) {
      await res.body?.cancel()
      throw new Error(`token endpoint answered ${res.status}`)
    }
    return TokenResponse.parse(await res.json())
  } catch (e) {
    log.warn('oauth.google_token_exchange_failed', { dependency: 'google', ...errorFields(e) })
    throw new SignInFailure('TokenExchangeFailed')
  } finally {
    bound.clear()
  }
}

async function verifyIdToken(c: Context<AppEnv>, discovery: Discovery, clientId: string, idToken: string, pending: PendingSignIn) {
  const { kv, config } = c.var.services
  let claims
  try {
    claims = await verifyProviderJwt(idToken, {
      kv,
      jwksUri: async () => discovery.jwks_uri,
      issuer: issuerVariants(config.GOOGLE_ISSUER),
      audience: [clientId],
      requiredClaims: ['sub', 'exp', 'iat'],
    })
  } catch (e) {
    if (e instanceof errors.JOSEError) throw new SignInFailure('InvalidIdToken')
    throw e // provider or store unavailable: not the token's fault
  }
  const nonceOk = typeof claims.nonce === 'string' && timingSafeEqual(claims.nonce, pending.nonce)
  // With several audiences the authorized party must be us (OIDC Core §3.1.3.7).
  const azpOk = claims.azp === undefined || claims.azp === clientId
  if (!nonceOk || !azpOk || typeof claims.sub !== 'string' || !claims.sub) throw new SignInFailure('InvalidIdToken')
  return { sub: claims.sub, email: claims.email, email_verified: claims.email_verified, name: claims.name }
}
