import { errors, jwtVerify, SignJWT, type JWTPayload } from 'jose'

/**
 * What a token is for. It is signed as the token's `aud` and required on reading, so a token made for one purpose
 * is never taken for another, even under the same secret.
 */
export type TokenPurpose = 'calendar-oauth-state' | 'google-oauth-state' | 'radio-dj-access'

/** A token's own claims; `aud`, `iat` and `exp` are the helper's. */
export type TokenClaims = Record<string, string | number> & { aud?: never; iat?: never; exp?: never }

/** How long a token lives: so many seconds from issue, or until a moment. `now` (ms) is the issue time. */
export type TokenLifetime = ({ expiresInSec: number } | { expiresAt: Date }) & { now?: number }

/** A token issued this far in the future (clock skew between isolates) is still taken; further is forged. */
const CLOCK_SKEW_SEC = 60
const ALGORITHM = 'HS256'

const keyOf = (secret: string) => new TextEncoder().encode(secret)
const seconds = (ms: number) => Math.floor(ms / 1000)

/** A compact HS256 JWT under `secret`: `claims`, `aud` = `purpose`, `iat` and `exp`. */
export async function signToken(secret: string, purpose: TokenPurpose, claims: TokenClaims, lifetime: TokenLifetime) {
  const iat = seconds(lifetime.now ?? Date.now())
  const exp = 'expiresAt' in lifetime ? seconds(lifetime.expiresAt.getTime()) : iat + lifetime.expiresInSec
  return new SignJWT(claims).setProtectedHeader({ alg: ALGORITHM }).setAudience(purpose).setIssuedAt(iat).setExpirationTime(exp).sign(keyOf(secret))
}

/**
 * The claims of a token signed under `secret` for `purpose`, unexpired (at `now`, ms) and not issued in the future
 * (past the clock skew); null for any other token: forged, tampered, malformed, expired, or of another purpose.
 */
export async function verifyToken(secret: string, purpose: TokenPurpose, token: string, { now = Date.now() }: { now?: number } = {}): Promise<JWTPayload | null> {
  try {
    const { payload } = await jwtVerify(token, keyOf(secret), {
      algorithms: [ALGORITHM],
      audience: purpose,
      requiredClaims: ['iat', 'exp'],
      currentDate: new Date(now),
    })
    if ((payload.iat as number) - seconds(now) > CLOCK_SKEW_SEC) return null
    return payload
  } catch (e) {
    if (e instanceof errors.JOSEError) return null
    throw e
  }
}
