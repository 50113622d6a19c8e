import { randomHex, sha256Hex } from '../crypto'

/** A mailed single-use token (verification, password reset): 256 random bits as 64 hex; only its SHA-256 is stored. */
export async function newMailToken() {
  const token = randomHex(32)
  return { token, tokenHash: await sha256Hex(token) }
}

/** The stored hash of a presented token, or null when it cannot be one we issued (then no query is needed). */
export const mailTokenHash = (token: string) => (/^[0-9a-f]{64}$/i.test(token) ? sha256Hex(token.toLowerCase()) : null)
