import { expect } from 'vitest'
import { hashSessionToken, newSessionToken, SESSION_COOKIE, SESSION_TTL_MS } from '../../../lib/auth/session'
import { sessions } from '../../../schema'
import { BROWSER, type Harness, type SeededUser } from '../../support/harness'
import { type Ceremony, SoftAuthenticator } from './authenticator'

/** The harness's relying party: APP_ORIGIN `http://localhost:3000`. */
export const RP = { origin: 'http://localhost:3000', rpId: 'localhost' }
export const HEX_CHALLENGE = /^0x[0-9a-f]{64}$/

export interface Options {
  options: Record<string, any>
  challenge: string
}

// A new client IP per request unless a test names one: only the rate-limit tests share a counter.
let ipSeq = 0
const nextIp = () => `10.${(++ipSeq >> 16) & 255}.${(ipSeq >> 8) & 255}.${ipSeq & 255}`

/** A request as the dashboard sends it: the user's cookie (if any), JSON, the trusted origin, a client IP. */
export function call(
  h: Harness,
  path: string,
  opts: { user?: SeededUser; cookie?: string; body?: unknown; headers?: Record<string, string>; ip?: string } = {},
) {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...BROWSER, 'cf-connecting-ip': opts.ip ?? nextIp(), ...opts.headers }
  const cookie = opts.cookie ?? opts.user?.cookie
  if (cookie) headers.cookie = cookie
  const body = opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body)
  return h.web.request(path, { method: 'POST', headers, body })
}

export async function registerOptions(h: Harness, user: SeededUser): Promise<Options> {
  const res = await call(h, '/api/passkey/register/options', { user })
  expect(res.status).toBe(200)
  return (await res.json()) as Options
}

export async function authOptions(h: Harness, identifier: string, ip?: string): Promise<Options> {
  const res = await call(h, '/api/passkey/auth/options', { body: { identifier }, ip })
  expect(res.status).toBe(200)
  return (await res.json()) as Options
}

export const registerVerify = (h: Harness, user: SeededUser, body: Record<string, unknown>) =>
  call(h, '/api/passkey/register/verify', { user, body })

export const authVerify = (h: Harness, body: Record<string, unknown>, ip?: string) => call(h, '/api/passkey/auth/verify', { body, ip })

/** A fresh software passkey registered for `user`. */
export async function enrol(h: Harness, user: SeededUser, label?: string, ceremony: Partial<Ceremony> = {}) {
  const authenticator = new SoftAuthenticator(RP)
  const { options, challenge } = await registerOptions(h, user)
  const res = await registerVerify(h, user, { credential: authenticator.register({ challenge: options.challenge, ...ceremony }), challenge, label })
  expect(res.status, await res.clone().text()).toBe(200)
  return authenticator
}

/** Options for `email`, an assertion over their challenge, and the verify response. */
export async function signIn(h: Harness, email: string, authenticator: SoftAuthenticator, ceremony: Partial<Ceremony> = {}, ip?: string) {
  const { options, challenge } = await authOptions(h, email, ip)
  const credential = authenticator.assert({ challenge: options.challenge, ...ceremony })
  return { res: await authVerify(h, { credential, challenge }, ip), credential, challenge }
}

export async function sessionUser(h: Harness, cookie: string) {
  const res = await h.web.request('/api/auth/session', { headers: { cookie } })
  return ((await res.json()) as { user: { id: string; email: string } | null }).user
}

/** The `name=value` part of the session Set-Cookie. */
export const sessionCookie = (res: Response) => res.headers.get('set-cookie')?.split(';')[0] ?? ''

/** A well-formed challenge nobody issued. */
export const unknownChallenge = () => `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex')}`

/** A GET or DELETE on the management routes, as the dashboard sends it. */
export function manage(h: Harness, method: 'GET' | 'DELETE', path: string, opts: { user?: SeededUser; cookie?: string; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...BROWSER, ...opts.headers }
  const cookie = opts.cookie ?? opts.user?.cookie
  if (cookie) headers.cookie = cookie
  return h.web.request(path, { method, headers })
}

export interface PasskeyItem {
  id: string
  label: string
  createdAt: string
  lastUsedAt: string | null
}

export async function listPasskeys(h: Harness, user: SeededUser): Promise<PasskeyItem[]> {
  const res = await manage(h, 'GET', '/api/passkeys', { user })
  expect(res.status).toBe(200)
  return ((await res.json()) as { passkeys: PasskeyItem[] }).passkeys
}

/** A second session for `user`, signed in `ageMinutes` ago; returns its cookie. */
export async function agedSession(h: Harness, user: SeededUser, ageMinutes: number): Promise<SeededUser> {
  const token = newSessionToken()
  await h.db.insert(sessions).values({
    tokenHash: await hashSessionToken(token),
    userId: user.id,
    expiresAt: new Date(Date.now() + SESSION_TTL_MS),
    createdAt: new Date(Date.now() - ageMinutes * 60_000),
  })
  return { ...user, token, cookie: `${SESSION_COOKIE}=${token}` }
}
