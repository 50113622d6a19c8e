import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTHeaderParameters, type FlattenedJWSInput } from 'jose'
import type { Kv } from '../../../lib/kv/types'
import { PROVIDER_CACHE_TTL_MS } from '../../../lib/oidc/discovery'
import { fetchProviderJson, OidcUnavailableError } from '../../../lib/oidc/errors'

/**
 * An unknown `kid` refetches the JWKS (the provider rotated keys), but only when the cached copy is older
 * than this: a stream of tokens with made-up kids cannot turn into a stream of fetches to the provider.
 */
export const JWKS_REFETCH_COOLDOWN_MS = 5 * 60 * 1000

interface CachedJwks {
  jwks: JSONWebKeySet
  fetchedAt: number
}

export const jwksCacheKey = (uri: string) => `oidc:jwks:${uri}`

async function fetchJwks(kv: Kv, uri: string): Promise<CachedJwks> {
  const doc = (await fetchProviderJson(uri, 'jwks')) as Partial<JSONWebKeySet> | null
  if (!doc || !Array.isArray(doc.keys)) throw new OidcUnavailableError('jwks: the document has no keys array')
  const cached = { jwks: { keys: doc.keys }, fetchedAt: Date.now() }
  await kv.set(jwksCacheKey(uri), cached, { ttlMs: PROVIDER_CACHE_TTL_MS })
  return cached
}

/**
 * A jose key resolver over a JWKS kept in kv (shared by every isolate, 24 h), like `createRemoteJWKSet` but
 * with the cache in the store. Keys are matched by `kid` (required) and algorithm by jose's local set.
 */
export function kvJwks(kv: Kv, uri: string) {
  return async (header: JWTHeaderParameters, token: FlattenedJWSInput) => {
    if (!header.kid) throw new errors.JWKSNoMatchingKey('The token names no key (kid)')
    let cached = await kv.get<CachedJwks>(jwksCacheKey(uri))
    const fresh = !cached
    if (!cached) cached = await fetchJwks(kv, uri)
    try {
      return await createLocalJWKSet(cached.jwks)(header, token)
    } catch (e) {
      const rotated = !fresh && Date.now() - cached.fetchedAt >= JWKS_REFETCH_COOLDOWN_MS
      if (!(e instanceof errors.JWKSNoMatchingKey) || !rotated) throw e
    }
    return createLocalJWKSet((await fetchJwks(kv, uri)).jwks)(header, token)
  }
}
