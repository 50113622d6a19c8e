import { createRoute } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import type { AppEnv } from '../../../lib/context'
import { noStore } from '../../../lib/http/no-store'
import { randomHex } from '../../../lib/crypto'
import { OidcUnavailableError, pkcePair } from '../oidc'
import { callbackUrl, googleClient, googleDiscovery, loginRedirect } from '../google'
import { issueState } from '../state'
import { errorFields, log } from '../../../lib/log'

export const route = createRoute({
  method: 'get',
  path: '/api/auth/google',
  operationId: 'startGoogleSignIn',
  security: [],
  middleware: [noStore] as const,
  tags: ['Auth'],
  summary: 'Start Google sign-in',
  description:
    "302 to Google's `authorization_endpoint` (from the discovery document) with `response_type=code`, scopes " +
    '`openid email profile`, `access_type=offline`, `prompt=select_account`, PKCE (S256), a nonce, and a signed ' +
    'single-use `state` (an HS256 JWT under `SESSION_SECRET`, 10 minutes) also set as the `google-oauth-state` cookie. `redirect_uri` is ' +
    '`{PUBLIC_URL or this origin}/api/auth/google/callback`. Unconfigured: 302 to `/login?error=GoogleNotConfigured`.',
  responses: {
    302: { description: "To Google's consent screen, or to the dashboard's `/login?error=<code>`" },
  },
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const client = googleClient(c.var.services.config)
  if (!client) return loginRedirect(c, 'GoogleNotConfigured')
  try {
    const discovery = await googleDiscovery(c)
    const { verifier, challenge } = await pkcePair()
    const nonce = randomHex(16)
    const redirectUri = callbackUrl(c)
    const state = await issueState(c, client.sessionSecret, { verifier, nonce, redirectUri })
    const url = new URL(discovery.authorization_endpoint)
    const params = {
      response_type: 'code',
      client_id: client.id,
      redirect_uri: redirectUri,
      scope: 'openid email profile',
      access_type: 'offline', // a refresh token on first consent
      prompt: 'select_account',
      state,
      nonce,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v)
    return c.redirect(url.toString(), 302)
  } catch (e) {
    log.error('oauth.google_start_failed', { ...(e instanceof OidcUnavailableError ? { dependency: 'google' } : {}), requestId: c.var.requestId, ...errorFields(e) })
    return loginRedirect(c, e instanceof OidcUnavailableError ? 'GoogleUnavailable' : 'OAuthCallbackError')
  }
}
