/** OpenID Connect helpers on web-standard APIs: discovery and JWKS cached in kv, RS256 verification, PKCE. */
export { getDiscovery, issuerVariants, sameIssuer, discoveryCacheKey, PROVIDER_CACHE_TTL_MS, type Discovery } from '../../../lib/oidc/discovery'
export { fetchProviderJson, OidcUnavailableError } from '../../../lib/oidc/errors'
export { jwksCacheKey, JWKS_REFETCH_COOLDOWN_MS, kvJwks } from './jwks'
export { pkcePair } from './pkce'
export { verifyProviderJwt, type VerifyOptions } from './verify'
