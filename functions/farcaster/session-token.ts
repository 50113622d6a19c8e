import { base64url } from 'jose'
import type { Config } from '../../lib/config'
import { hmacSha256, timingSafeEqual } from '../../lib/crypto'
import { ApiError } from '../../lib/http/errors'
import { log } from '../../lib/log'

/** A Farcaster session token lives 7 days; refresh re-signs it with a fresh `exp`. */
export const SESSION_TOKEN_TTL_SEC = 7 * 24 * 60 * 60

export interface SessionTokenData {
  fid: number
  userId: string
  iat: number
  exp: number
}

const dec = new TextDecoder('utf-8', { fatal: true })
const B64URL = /^[A-Za-z0-9_-]+$/

// The spec fixes this two-part shape, so it is not a JWT (lib/auth/signed-token.ts); the HMAC is lib/crypto's.
const sign = async (secret: string, dataPart: string) => base64url.encode(await hmacSha256(secret, dataPart))

let devSecret: string | undefined

/**
 * FARCASTER_SESSION_SECRET, else NEXTAUTH_SECRET. In production without either: 500. Elsewhere a random
 * per-isolate secret (warned once): never a fixed, guessable one, should NODE_ENV be left unset on a deploy.
 */
export function sessionTokenSecret(config: Config) {
  const secret = config.FARCASTER_SESSION_SECRET ?? config.NEXTAUTH_SECRET
  if (secret) return secret
  if (config.NODE_ENV === 'production') throw new ApiError('MISCONFIGURED', 'Farcaster session secret not configured')
  if (!devSecret) {
    devSecret = base64url.encode(crypto.getRandomValues(new Uint8Array(32)))
    log.warn('farcaster.dev_session_secret', { note: 'FARCASTER_SESSION_SECRET and NEXTAUTH_SECRET unset: random per-process secret' })
  }
  return devSecret
}

/** `{base64url(JSON data)}.{base64url(HMAC-SHA256(secret, data part))}` with a fresh iat/exp. */
export async function issueSessionToken(secret: string, claims: { fid: number; userId: string }, now = Date.now()) {
  const iat = Math.floor(now / 1000)
  const data: SessionTokenData = { fid: claims.fid, userId: claims.userId, iat, exp: iat + SESSION_TOKEN_TTL_SEC }
  const dataPart = base64url.encode(JSON.stringify(data))
  return { sessionToken: `${dataPart}.${await sign(secret, dataPart)}`, data, expiresAt: new Date(data.exp * 1000).toISOString() }
}

/** The data of a well-formed, correctly signed (compared in constant time), unexpired token; else null. */
export async function readSessionToken(secret: string, token: string, now = Date.now()): Promise<SessionTokenData | null> {
  const parts = token.split('.')
  if (parts.length !== 2 || !B64URL.test(parts[0]) || !B64URL.test(parts[1])) return null
  if (!timingSafeEqual(await sign(secret, parts[0]), parts[1])) return null
  let data: unknown
  try {
    data = JSON.parse(dec.decode(base64url.decode(parts[0])))
  } catch {
    return null
  }
  const d = data as Partial<SessionTokenData> | null
  const valid =
    !!d && typeof d === 'object' && Number.isSafeInteger(d.fid) && (d.fid as number) > 0 &&
    typeof d.userId === 'string' && d.userId.length > 0 && Number.isFinite(d.iat) && Number.isFinite(d.exp)
  if (!valid || (d.exp as number) * 1000 <= now) return null
  return d as SessionTokenData
}
