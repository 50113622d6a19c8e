import { createLocalJWKSet, decodeProtectedHeader, errors, jwtVerify, type JSONWebKeySet, type JWTPayload, type JWTVerifyOptions } from 'jose'
import type { Config } from '../../lib/config'
import { deadline } from '../../lib/deadline'
import { ApiError, peerUnavailable } from '../../lib/http/errors'
import { errorFields, log } from '../../lib/log'

// Public-key algorithms only: an HS* token "signed" with a published key, or `alg: none`, never verifies.
const ALGORITHMS = ['EdDSA', 'Ed25519', 'ES256', 'ES384', 'ES512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512']
const CLOCK_TOLERANCE_SEC = 30
// The issuer's own trouble (unreachable, not a key set): 502, not the caller's fault.
const ISSUER_FAULTS = new Set(['ERR_JWKS_INVALID', 'ERR_JWK_INVALID'])

export const farcasterIssuer = (config: Config) => config.FARCASTER_ISSUER
export const farcasterDomain = (config: Config) => config.FARCASTER_DOMAIN ?? config.serviceDomain
export const farcasterJwksUrl = (config: Config) =>
  config.FARCASTER_JWKS_URL ?? `${config.FARCASTER_ISSUER.replace(/\/+$/, '')}/.well-known/jwks.json`

const JWKS_MAX_AGE_MS = 10 * 60 * 1000
const JWKS_REFETCH_COOLDOWN_MS = 30 * 1000

class IssuerFault extends Error {}

/**
 * The issuer's key set, kept per isolate as imported keys (no pending fetch is ever shared between requests,
 * which workerd refuses): fetched by the request that finds it missing or older than 10 minutes.
 */
type KeySet = { keys: ReturnType<typeof createLocalJWKSet>; at: number }
const keySets = new Map<string, KeySet>()

async function fetchKeySet(url: string): Promise<KeySet> {
  const bound = deadline(5_000)
  let body: JSONWebKeySet
  try {
    const res = await fetch(url, { headers: { accept: 'application/json' }, redirect: 'manual', signal: bound.signal })
    if (!res.ok) throw new IssuerFault(`key set answered ${res.status}`)
    body = (await res.json()) as JSONWebKeySet
  } finally {
    bound.clear()
  }
  const set = { keys: createLocalJWKSet(body), at: Date.now() } // throws JWKSInvalid for a non-key-set
  keySets.set(url, set)
  return set
}

async function verifyWithKeySet(token: string, url: string, options: JWTVerifyOptions) {
  let set = keySets.get(url)
  if (!set || Date.now() - set.at > JWKS_MAX_AGE_MS) set = await fetchKeySet(url)
  try {
    return await jwtVerify(token, set.keys, options)
  } catch (e) {
    // An unknown kid may be a rotated key: refetch, at most every 30 s, so forged kids cannot hammer the issuer.
    if (!(e instanceof errors.JWKSNoMatchingKey) || Date.now() - set.at < JWKS_REFETCH_COOLDOWN_MS) throw e
    return await jwtVerify(token, (await fetchKeySet(url)).keys, options)
  }
}

const invalid = () => new ApiError('INVALID_TOKEN', 'Invalid Farcaster token')

/**
 * The JWS header's `alg` must be one we verify with, checked before the key set is fetched: `none`, HS256
 * or an unknown algorithm is the caller's 401, never a trip to the issuer (nor its 502 when unreachable).
 */
function assertAllowedAlgorithm(token: string) {
  let alg: unknown
  try {
    ;({ alg } = decodeProtectedHeader(token))
  } catch {
    throw invalid()
  }
  if (typeof alg !== 'string' || !ALGORITHMS.includes(alg) || token.split('.').length !== 3) throw invalid()
}

/** The FID in `sub`: Quick Auth sends a number; a numeric string is accepted too. */
function fidOf(sub: unknown) {
  const fid = typeof sub === 'number' ? sub : typeof sub === 'string' && /^[1-9]\d{0,15}$/.test(sub) ? Number(sub) : NaN
  return Number.isSafeInteger(fid) && fid > 0 ? fid : null
}

/**
 * A Farcaster Quick Auth ID token, verified for real: `alg` first, then the signature against the issuer's
 * JWKS, `iss`, `aud`, `exp` (required), `iat` (required, not in the future), `sub` a FID. 401 otherwise;
 * 502 when the key set is unreachable.
 */
export async function verifyFarcasterToken(config: Config, token: string, requestId?: string): Promise<{ fid: number; claims: JWTPayload }> {
  assertAllowedAlgorithm(token)
  const url = farcasterJwksUrl(config)
  let claims: JWTPayload
  try {
    ;({ payload: claims } = await verifyWithKeySet(token, url, {
      issuer: farcasterIssuer(config),
      audience: farcasterDomain(config),
      algorithms: ALGORITHMS,
      requiredClaims: ['exp', 'iat', 'sub'],
      clockTolerance: CLOCK_TOLERANCE_SEC,
    }))
  } catch (e) {
    if (e instanceof errors.JOSEError && !ISSUER_FAULTS.has(e.code)) throw invalid()
    log.error('farcaster.key_set_unavailable', { dependency: 'farcaster', requestId, ...errorFields(e) })
    throw peerUnavailable('PROVIDER_UNAVAILABLE', 'Farcaster issuer unavailable')
  }
  if ((claims.iat as number) > Date.now() / 1000 + CLOCK_TOLERANCE_SEC) throw invalid()
  const fid = fidOf(claims.sub)
  if (fid === null) throw invalid()
  return { fid, claims }
}
