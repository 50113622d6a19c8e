import { base64url } from 'jose'
import { hmacSha256, hmacSha256Hex, randomHex, sha256, timingSafeEqual } from '../../lib/crypto'
import type { Kv } from '../../lib/kv/types'

/** The spec's "Limits": a calendar OAuth state is valid 10 minutes. */
export const STATE_TTL_MS = 10 * 60 * 1000
/** A state issued this far in the future (clock skew between isolates) is still taken; further is forged. */
const CLOCK_SKEW_MS = 60 * 1000
const STATE_FORMAT = /^([A-Za-z0-9_-]{1,400})\.([0-9a-f]{64})$/

/** What a state carries: whose calendar is being connected, a single-use nonce, and when it was issued. */
export interface CalendarState {
  userId: string
  nonce: string
  issuedAt: number
}

const enc = new TextEncoder()
const dec = new TextDecoder()
const sign = (secret: string, body: string) => hmacSha256Hex(secret, `calendar-oauth-state:${body}`)

/** `<base64url(JSON {u, n, t})>.<hex HMAC-SHA256 under SESSION_SECRET>`: self-contained, nothing stored until used. */
export async function signState(secret: string, state: CalendarState) {
  const body = base64url.encode(enc.encode(JSON.stringify({ u: state.userId, n: state.nonce, t: state.issuedAt })))
  return `${body}.${await sign(secret, body)}`
}

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
  const m = STATE_FORMAT.exec(state)
  if (!m || !timingSafeEqual(m[2], await sign(secret, m[1]))) return null
  let parsed: { u?: unknown; n?: unknown; t?: unknown }
  try {
    parsed = JSON.parse(dec.decode(base64url.decode(m[1])))
  } catch {
    return null
  }
  const { u, n, t } = parsed ?? {}
  if (typeof u !== 'string' || !u || typeof n !== 'string' || !/^[0-9a-f]{32}$/.test(n) || typeof t !== 'number' || !Number.isFinite(t)) return null
  if (now - t > STATE_TTL_MS || t - now > CLOCK_SKEW_MS) return null
  return { userId: u, nonce: n, issuedAt: t }
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
