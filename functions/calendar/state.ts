import { base64url } from 'jose'
import { signToken, verifyToken } from '../../lib/auth/signed-token'
import { hmacSha256, randomHex, sha256 } from '../../lib/crypto'
import type { Kv } from '../../lib/kv/types'

/** The spec's "Limits": a calendar OAuth state is valid 10 minutes. */
export const STATE_TTL_MS = 10 * 60 * 1000
const NONCE = /^[0-9a-f]{32}$/

/** What a state carries: whose calendar is being connected, a single-use nonce, and when it was issued (ms). */
export interface CalendarState {
  userId: string
  nonce: string
  issuedAt: number
}

/** A signed token (lib/auth/signed-token.ts) naming the user (`sub`) and the nonce (`jti`): nothing stored until used. */
export const signState = (secret: string, state: CalendarState) =>
  signToken(secret, 'calendar-oauth-state', { sub: state.userId, jti: state.nonce }, { expiresInSec: STATE_TTL_MS / 1000, now: state.issuedAt })

/** A new state for `userId`, issued now, with its nonce (the PKCE verifier is derived from it). */
export async function issueState(secret: string, userId: string, now = Date.now()) {
  const content = { userId, nonce: randomHex(16), issuedAt: now }
  return { state: await signState(secret, content), nonce: content.nonce }
}

/**
 * The state's content when its signature holds and it is at most 10 minutes old; null otherwise (forged,
 * malformed, expired or from the future). Checks nothing in the store: see `spendState`.
 */
export async function verifyState(secret: string, state: string, now = Date.now()): Promise<CalendarState | null> {
  const claims = await verifyToken(secret, 'calendar-oauth-state', state, { now })
  const { sub, jti, iat } = claims ?? {}
  if (typeof sub !== 'string' || !sub || typeof jti !== 'string' || !NONCE.test(jti) || typeof iat !== 'number') return null
  return { userId: sub, nonce: jti, issuedAt: iat * 1000 }
}

/** Marks the state's nonce used, once: true for the first caller, false for a replay (kv `SET NX`, 10 minutes). */
export const spendState = (kv: Kv, state: CalendarState) =>
  kv.set(`calendar:oauth-state:${state.nonce}`, 1, { nx: true, ttlMs: STATE_TTL_MS })

/**
 * PKCE (RFC 7636, S256) without storing the verifier: it is derived from the state's nonce under the session
 * secret, so only this service can repeat it at the token endpoint, and a code taken from another flow fails.
 */
export async function pkceVerifier(secret: string, nonce: string) {
  return base64url.encode(await hmacSha256(secret, `calendar-pkce:${nonce}`))
}

export async function pkceChallenge(verifier: string) {
  return base64url.encode(await sha256(verifier))
}
