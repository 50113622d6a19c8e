import { isoBase64URL } from '@simplewebauthn/server/helpers'
import type { AppContext } from '../../lib/context'
import { toHex } from '../../lib/crypto'
import { ApiError } from '../../lib/http/errors'

/**
 * WebAuthn challenges: 32 random bytes, handed to clients as `0x` + hex and to simplewebauthn as bytes
 * (it puts them in the options as base64url). Stored server-side under the hex, expiring, single-use.
 */
const KEY = 'passkey:challenge:'
const HEX = /^0x[0-9a-fA-F]{64}$/

export interface ChallengeBinding {
  purpose: 'register' | 'auth'
  /** register: who asked for it; auth: the account the identifier named (absent for an unknown one). */
  userId?: string
}

export const invalidChallenge = () => new ApiError('CHALLENGE_INVALID')

export async function issueChallenge(c: AppContext, binding: ChallengeBinding) {
  const { kv, config } = c.var.services
  const bytes = crypto.getRandomValues(new Uint8Array(32))
  const hex = toHex(bytes)
  await kv.set(KEY + hex, binding, { ttlMs: config.PASSKEY_CHALLENGE_TTL_MS })
  return { bytes, challenge: `0x${hex}` }
}

/**
 * Consumes a presented challenge that `accepts` its binding; 400 when it is malformed, unknown, expired,
 * already used or bound elsewhere. Read first so a challenge presented by the wrong caller stays usable
 * by its owner; `take` is then the single-use step (of two concurrent uses, one gets null).
 * Returns the binding and the base64url form the authenticator signed.
 */
export async function consumeChallenge(c: AppContext, presented: string, accepts: (b: ChallengeBinding) => boolean) {
  if (!HEX.test(presented)) throw invalidChallenge()
  const hex = presented.slice(2).toLowerCase()
  const { kv } = c.var.services
  const binding = await kv.get<ChallengeBinding>(KEY + hex)
  if (!binding || !accepts(binding)) throw invalidChallenge()
  if (!(await kv.take(KEY + hex))) throw invalidChallenge()
  return { binding, expected: isoBase64URL.fromBuffer(hexToBytes(hex)) }
}

/**
 * 400 when the credential signed a different challenge than the one presented: a client mix-up, told
 * apart from a failed signature. Unreadable client data is left to the full verification.
 */
export function assertSignedChallenge(credential: { response: { clientDataJSON?: unknown } }, expected: string) {
  const raw = credential.response.clientDataJSON
  let signed: unknown
  try {
    signed = JSON.parse(new TextDecoder().decode(isoBase64URL.toBuffer(String(raw)))).challenge
  } catch {
    return
  }
  if (signed !== expected) throw new ApiError('CHALLENGE_MISMATCH')
}

const hexToBytes = (hex: string) => Uint8Array.from(hex.match(/../g) ?? [], (b) => parseInt(b, 16))
