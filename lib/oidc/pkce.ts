import { base64url } from 'jose'

/** RFC 7636: a 43-character verifier from 32 random bytes and its S256 challenge. */
export async function pkcePair() {
  const verifier = base64url.encode(crypto.getRandomValues(new Uint8Array(32)))
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))
  return { verifier, challenge: base64url.encode(new Uint8Array(digest)) }
}
