import { z } from 'zod'
import type { Kv } from '../kv/types'
import { fetchProviderJson, OidcUnavailableError } from './errors'

/** Discovery and JWKS documents are cached this long in kv (Google's RISC guidance: cache keys ~24 h). */
export const PROVIDER_CACHE_TTL_MS = 24 * 60 * 60 * 1000

const DiscoveryDocument = z.object({
  issuer: z.string().url(),
  authorization_endpoint: z.string().url(),
  token_endpoint: z.string().url(),
  jwks_uri: z.string().url(),
})
export type Discovery = z.infer<typeof DiscoveryDocument>

export const discoveryCacheKey = (url: string) => `oidc:discovery:${url}`

/** Issuers compared without a trailing slash: Google's RISC tokens say `https://accounts.google.com/`. */
export const sameIssuer = (a: string, b: string) => a.replace(/\/+$/, '') === b.replace(/\/+$/, '')

/**
 * Every spelling of `issuer` a token may carry: with and without the trailing slash, and for Google the bare
 * host (its ID tokens may say `accounts.google.com`, as Google documents).
 */
export function issuerVariants(issuer: string): string[] {
  const bare = issuer.replace(/\/+$/, '')
  const variants = [bare, `${bare}/`]
  if (bare === 'https://accounts.google.com') variants.push('accounts.google.com')
  return variants
}

/**
 * The provider's discovery document, cached in kv for 24 h. Its `issuer` must be the configured one
 * (OpenID Connect Discovery §4.3), so a misdirected discovery URL never supplies keys for our issuer.
 */
export async function getDiscovery(kv: Kv, url: string, expectedIssuer: string, timeoutMs?: number): Promise<Discovery> {
  const key = discoveryCacheKey(url)
  const cached = DiscoveryDocument.safeParse(await kv.get(key))
  if (cached.success) return cached.data
  const parsed = DiscoveryDocument.safeParse(await fetchProviderJson(url, 'discovery', timeoutMs))
  if (!parsed.success) throw new OidcUnavailableError('discovery: the document lacks the required endpoints')
  if (!sameIssuer(parsed.data.issuer, expectedIssuer)) {
    throw new OidcUnavailableError('discovery: the document names another issuer')
  }
  await kv.set(key, parsed.data, { ttlMs: PROVIDER_CACHE_TTL_MS })
  return parsed.data
}
