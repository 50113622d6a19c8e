import type { Config } from '../config'
import type { Kv } from '../kv/types'
import { getDiscovery } from './discovery'

/**
 * Google as an OAuth client of this service (sign-in and Calendar alike): the client id and secret, and the
 * session secret that signs the `state`. Null when any is missing: the caller answers "not configured".
 */
export function googleClient(config: Config) {
  const { GOOGLE_CLIENT_ID: id, GOOGLE_CLIENT_SECRET: secret, sessionSecret } = config
  return id && secret && sessionSecret ? { id, secret, sessionSecret, timeoutMs: config.GOOGLE_TIMEOUT_MS } : null
}
export type GoogleClient = NonNullable<ReturnType<typeof googleClient>>

export const googleDiscoveryUrl = (config: Config) =>
  config.GOOGLE_DISCOVERY_URL ?? `${config.GOOGLE_ISSUER.replace(/\/+$/, '')}/.well-known/openid-configuration`

/** Google's endpoints (authorize, token, JWKS) from its discovery document, cached in kv for 24 h. */
export const getGoogleDiscovery = (kv: Kv, config: Config) => getDiscovery(kv, googleDiscoveryUrl(config), config.GOOGLE_ISSUER, config.GOOGLE_TIMEOUT_MS)
