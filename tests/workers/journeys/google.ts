import type { OidcServer } from '../../support/oidc-server'

/** The Workers' Google configuration, pointed at the loopback provider (one for sign-in, RISC and the calendar). */
export const GOOGLE = { clientId: 'workerd-client.apps.googleusercontent.com', clientSecret: 'workerd-client-secret' }
export const googleEnv = (oidc: OidcServer) => ({
  GOOGLE_CLIENT_ID: GOOGLE.clientId,
  GOOGLE_CLIENT_SECRET: GOOGLE.clientSecret,
  GOOGLE_ISSUER: oidc.url,
  GOOGLE_DISCOVERY_URL: oidc.discoveryUrl,
})

export const location = (res: Response) => new URL(res.headers.get('location') ?? 'about:blank')

/** The user at the provider's authorize endpoint consents: the callback URL (on the platform) with `code` and `state`. */
export async function consent(url: URL) {
  const res = await fetch(url, { redirect: 'manual' })
  if (res.status !== 302) throw new Error(`authorize answered ${res.status}`)
  return location(res)
}

/** A platform URL's path and query, to send through `p.fetch`. */
export const pathOf = (url: URL) => `${url.pathname}${url.search}`
