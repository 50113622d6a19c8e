import { expect } from 'vitest'
import { BROWSER, type Harness, type SeededUser } from './harness'

/** A JSON body as sent: a string as is (malformed JSON for the error tests), anything else serialised. */
const encode = (body: unknown) => (body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body))

let ipSeq = 0
/** A new client IP on every call, so only the rate-limit tests share a limiter counter. */
export const freshIp = () => `198.18.${(++ipSeq >> 8) & 255}.${ipSeq & 255}`

const userIps = new Map<string, string>()
/** The client address a seeded user calls from (one each, as people on their own machines): the same on every call. */
export const userIp = (user: Pick<SeededUser, 'id'>) => {
  let ip = userIps.get(user.id)
  if (!ip) userIps.set(user.id, (ip = freshIp()))
  return ip
}

/**
 * A request to the web app as the dashboard sends it: the user's cookie (if any) from the user's own address
 * (`userIp`, unless the headers name one), JSON, and the trusted origin.
 * Untyped on purpose, for the error and security tests' malformed requests; happy paths use `webClient`.
 */
export function call(h: Harness, method: string, path: string, opts: { user?: SeededUser; body?: unknown; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...BROWSER, ...(opts.user ? { 'cf-connecting-ip': userIp(opts.user) } : {}), ...opts.headers }
  if (opts.user) headers.cookie = opts.user.cookie
  return h.web.request(path, { method, headers, body: encode(opts.body) })
}

/** A request to the backend app (`app`, the harness's unless a test built its own) from a fresh client IP. */
export function backendCall(app: Pick<Harness['backend'], 'request'>, method: string, path: string, opts: { headers?: Record<string, string>; body?: unknown } = {}) {
  const json: Record<string, string> = opts.body === undefined ? {} : { 'content-type': 'application/json' }
  return app.request(path, { method, headers: { 'cf-connecting-ip': freshIp(), ...json, ...opts.headers }, body: encode(opts.body) })
}

/**
 * Waits, when needed, so that the next `needMs` fall inside one fixed rate-limit window of `windowSec` (both
 * limiter adapters count in windows aligned to the epoch): a test that fills a limit never straddles a reset.
 */
export async function withinOneWindow(windowSec: number, needMs = 10_000) {
  const windowMs = windowSec * 1000
  const left = windowMs - (Date.now() % windowMs)
  if (left < needMs) await new Promise((r) => setTimeout(r, left + 50))
}

/** The answer to a cookie-authenticated write from an Origin outside APP_ORIGIN (lib/auth/session.ts), with its hint. */
export const FORBIDDEN_ORIGIN = { error: 'Forbidden origin', code: 'ORIGIN_NOT_ALLOWED', hint: expect.stringContaining('APP_ORIGIN') }
