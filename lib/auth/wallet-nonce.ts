import { randomHex } from '../crypto'
import type { Kv } from '../kv/types'

/** Long enough to sign in (or sign a wallet proof) in a wallet app, short enough that a leaked nonce goes stale. */
export const NONCE_TTL_MS = 10 * 60 * 1000
// What a server-issued nonce looks like: anything else is refused without a kv round trip.
const NONCE_SHAPE = /^[a-zA-Z0-9]{16,64}$/
const key = (nonce: string) => `wallet-auth:nonce:${nonce}`

/** 128 random bits as 32 hex characters: alphanumeric, as EIP-4361 requires (≥ 8). */
export async function issueNonce(kv: Kv) {
  const nonce = randomHex(16)
  await kv.set(key(nonce), Date.now(), { ttlMs: NONCE_TTL_MS })
  return nonce
}

/** Single use: read-and-delete, so a nonce is spent by the first attempt whatever its outcome. */
export async function consumeNonce(kv: Kv, nonce: string) {
  if (!NONCE_SHAPE.test(nonce)) return false
  return (await kv.take(key(nonce))) !== null
}
