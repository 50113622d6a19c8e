/** Web-crypto helpers shared by every family (no Node built-ins: these run in workerd). */
const enc = new TextEncoder()

export const toHex = (bytes: ArrayBuffer | Uint8Array) =>
  Array.from(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0')).join('')

export const randomHex = (byteCount: number) => toHex(crypto.getRandomValues(new Uint8Array(byteCount)))

/** SHA-256 of `text`, as bytes (encode them as the format needs). */
export const sha256 = async (text: string) => new Uint8Array(await crypto.subtle.digest('SHA-256', enc.encode(text)))

export const sha256Hex = async (text: string) => toHex(await sha256(text))

/** HMAC-SHA256 of `message` under `secret`, as bytes (encode them as the format needs). */
export async function hmacSha256(secret: string, message: string) {
  const key = await crypto.subtle.importKey('raw', enc.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  return new Uint8Array(await crypto.subtle.sign('HMAC', key, enc.encode(message)))
}

export const hmacSha256Hex = async (secret: string, message: string) => toHex(await hmacSha256(secret, message))

/** Constant-time comparison of two strings (length leaks, content does not). */
export function timingSafeEqual(a: string, b: string) {
  const x = enc.encode(a)
  const y = enc.encode(b)
  let diff = x.length ^ y.length
  for (let i = 0; i < Math.max(x.length, y.length); i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0)
  return diff === 0
}
