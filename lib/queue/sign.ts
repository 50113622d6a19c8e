import { base64url, SignJWT } from 'jose'
import { sha256 } from '../crypto'

/**
 * Signs a delivery exactly as QStash does (HS256 JWT, issuer `Upstash`, subject = destination URL,
 * `body` = base64url SHA-256 of the body, 5-minute expiry), so one verifier serves QStash and the
 * in-process queue alike.
 */
export async function signDelivery(signingKey: string, url: string, body: string): Promise<string> {
  const bodyHash = base64url.encode(await sha256(body))
  const now = Math.floor(Date.now() / 1000)
  return new SignJWT({ body: bodyHash })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer('Upstash')
    .setSubject(url)
    .setIssuedAt(now)
    .setNotBefore(now)
    .setExpirationTime(now + 300)
    .setJti(`jwt_${crypto.randomUUID()}`)
    .sign(new TextEncoder().encode(signingKey))
}
