import { base64url } from 'jose'
import { sha256 } from '../../../lib/crypto'

/** RFC 7636: a 43-character verifier from 32 random bytes and its S256 challenge. */
export async function pkcePair() {
  const verifier = base64url.encode(crypto.getRandomValues(new Uint8Array(32)))
  return { verifier, challenge: base64url.encode(await sha256(verifier)) }
}
