import { base64url } from 'jose'
import { hmacSha256Hex, timingSafeEqual } from '../../lib/crypto'

/**
 * A DJ access token: `<base64url(JSON {s, w, exp})>.<hex HMAC-SHA256 under SESSION_SECRET>`, naming one radio
 * session and its wallet, valid until the session's own expiry. Self-contained: nothing is stored, so it is shown
 * once at creation and proves the bearer created that session (it ends it: `DELETE /api/radio/streams/:id`).
 */
export interface DjToken {
  sessionId: string
  /** The wallet, lower case. */
  wallet: string
  /** Unix seconds. */
  exp: number
}

const TOKEN_FORMAT = /^([A-Za-z0-9_-]{1,400})\.([0-9a-f]{64})$/
const enc = new TextEncoder()
const dec = new TextDecoder('utf-8', { fatal: true })
// A domain prefix: no other HMAC made under SESSION_SECRET (CSRF, OAuth state) can pass as a DJ token.
const sign = (secret: string, body: string) => hmacSha256Hex(secret, `radio-dj-token:${body}`)

export async function issueDjToken(secret: string, token: DjToken) {
  const body = base64url.encode(enc.encode(JSON.stringify({ s: token.sessionId, w: token.wallet, exp: token.exp })))
  return `${body}.${await sign(secret, body)}`
}

/** The token's content when well-formed, signed under `secret` (compared in constant time) and unexpired; else null. */
export async function readDjToken(secret: string, token: string, now = Date.now()): Promise<DjToken | null> {
  const m = TOKEN_FORMAT.exec(token)
  if (!m || !timingSafeEqual(m[2], await sign(secret, m[1]))) return null
  let parsed: { s?: unknown; w?: unknown; exp?: unknown }
  try {
    parsed = JSON.parse(dec.decode(base64url.decode(m[1])))
  } catch {
    return null
  }
  const { s, w, exp } = parsed ?? {}
  if (typeof s !== 'string' || !s || typeof w !== 'string' || !/^0x[0-9a-f]{40}$/.test(w) || typeof exp !== 'number' || !Number.isFinite(exp)) return null
  if (exp * 1000 <= now) return null
  return { sessionId: s, wallet: w, exp }
}
