import { hmacSha256Hex, timingSafeEqual } from '../../lib/crypto'

/** Mux's documented replay window: a signature more than 5 minutes from our clock (either way) is refused. */
export const MUX_WEBHOOK_TOLERANCE_SEC = 300

/**
 * Whether `header` (`mux-signature: t=<unix>,v1=<hex>`) signs `rawBody` under `secret`: the lower-case hex
 * HMAC-SHA256 of `<t>.<rawBody>`, compared in constant time with every `v1` entry, `t` within the tolerance.
 */
export async function verifyMuxSignature(secret: string, header: string, rawBody: string, now = Date.now()): Promise<boolean> {
  let timestamp: string | undefined
  const signatures: string[] = []
  for (const part of header.split(',')) {
    const eq = part.indexOf('=')
    if (eq <= 0) continue
    const key = part.slice(0, eq).trim()
    const value = part.slice(eq + 1).trim()
    if (key === 't') timestamp = value
    else if (key === 'v1') signatures.push(value.toLowerCase())
  }
  if (!timestamp || !/^\d{1,12}$/.test(timestamp) || signatures.length === 0) return false
  if (Math.abs(now / 1000 - Number(timestamp)) > MUX_WEBHOOK_TOLERANCE_SEC) return false
  const expected = await hmacSha256Hex(secret, `${timestamp}.${rawBody}`)
  // every entry is compared (no early exit), so timing says nothing about which one matched
  return signatures.map((s) => timingSafeEqual(s, expected)).includes(true)
}
