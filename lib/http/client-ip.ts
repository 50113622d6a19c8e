import type { Context } from 'hono'

/** On Workers the edge sets CF-Connecting-IP and a client cannot forge it past Cloudflare. */
export const cfClientIp = (c: Context) => c.req.header('cf-connecting-ip') ?? 'unknown'

/**
 * The client address behind trusted proxies: walk the chain [...X-Forwarded-For, peer] from the right
 * and return the first hop that is not a trusted proxy. Without trusted proxies, the peer itself.
 * A client can prepend anything to X-Forwarded-For, so only hops added by trusted proxies count.
 */
export function clientIpBehindProxies(peer: string, forwardedFor: string | undefined, trusted: (ip: string) => boolean) {
  const chain = [...(forwardedFor ?? '').split(',').map((s) => s.trim()).filter(Boolean), peer]
  for (let i = chain.length - 1; i >= 0; i--) {
    if (!trusted(chain[i]) || i === 0) return chain[i]
  }
  return peer
}

/** `TRUST_PROXY`: unset = trust no proxy; `loopback`; or a comma-separated list of proxy addresses. */
export function trustedProxyMatcher(setting: string | undefined): (ip: string) => boolean {
  if (!setting) return () => false
  const entries = setting.split(',').map((s) => s.trim()).filter(Boolean)
  const set = new Set(entries.map(normalizeIp))
  const loopback = entries.includes('loopback') || entries.includes('true') || entries.includes('1')
  return (ip) => {
    const n = normalizeIp(ip)
    return set.has(n) || (loopback && (n === '::1' || n.startsWith('127.')))
  }
}

/**
 * Whether the client reached us over TLS: the request URL's scheme (Workers see the client's scheme), or,
 * only when the socket peer is a trusted proxy, an `https` anywhere in its X-Forwarded-Proto list (a
 * TLS-terminating proxy further out may be followed by one that forwards plain http). Erring towards
 * `https` only ever adds `Secure` to a cookie, which a client cannot turn against anyone but itself.
 */
export function requestIsHttps(c: Context, peerIsTrustedProxy: () => boolean) {
  if (new URL(c.req.url).protocol === 'https:') return true
  const proto = c.req.header('x-forwarded-proto')
  if (!proto || !peerIsTrustedProxy()) return false
  return proto.split(',').some((p) => p.trim().toLowerCase() === 'https')
}

export const normalizeIp = (ip: string) => (ip.startsWith('::ffff:') ? ip.slice(7) : ip)
