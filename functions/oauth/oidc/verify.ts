import { decodeJwt, errors, jwtVerify, type JWTPayload } from 'jose'
import type { Kv } from '../../../lib/kv/types'
import { kvJwks } from './jwks'

export interface VerifyOptions {
  kv: Kv
  /** Resolved only when the token's header passed (no provider fetch for an `alg: none` token). */
  jwksUri: () => Promise<string>
  issuer: string[]
  audience: string[]
  /** Claims that must be present (an ID token needs `exp`; Google's security event tokens carry none). */
  requiredClaims?: string[]
}

/**
 * Verifies a provider-signed JWT: RS256 only (refuses `none`, HS256 and every other algorithm before any
 * key lookup), the signing key from the provider's JWKS by `kid`, issuer and audience exact, `exp`/`nbf`
 * when present. Throws jose's errors for an invalid token and `OidcUnavailableError` when the JWKS is unreachable.
 */
export async function verifyProviderJwt(token: string, opts: VerifyOptions): Promise<JWTPayload> {
  // Unverified issuer/audience first: a token not even meant for us never costs a discovery or JWKS fetch.
  const unverified = decodeJwt(token)
  const audiences = ([] as unknown[]).concat(unverified.aud ?? [])
  if (!opts.issuer.includes(unverified.iss as string) || !audiences.some((a) => opts.audience.includes(a as string))) {
    throw new errors.JWTClaimValidationFailed('unexpected issuer or audience', unverified)
  }
  const { payload } = await jwtVerify(token, async (header, input) => kvJwks(opts.kv, await opts.jwksUri())(header, input), {
    algorithms: ['RS256'],
    issuer: opts.issuer,
    audience: opts.audience,
    requiredClaims: opts.requiredClaims,
  })
  return payload
}
