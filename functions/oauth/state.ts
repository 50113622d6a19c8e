import type { Context } from 'hono'
import { deleteCookie, getCookie, setCookie } from 'hono/cookie'
import type { AppEnv } from '../../lib/context'
import { hmacSha256Hex, randomHex, timingSafeEqual } from '../../lib/crypto'

export const STATE_TTL_MS = 10 * 60 * 1000
/** Binds the flow to the browser that started it: a callback link planted by someone else is refused (login CSRF). */
export const STATE_COOKIE = 'google-oauth-state'
const STATE_FORMAT = /^([0-9a-f]{32})\.([0-9a-f]{64})$/

export interface PendingSignIn {
  verifier: string
  nonce: string
  redirectUri: string
  createdAt: number
}

const stateKey = (id: string) => `oauth:google:state:${id}`
const sign = (secret: string, id: string) => hmacSha256Hex(secret, `google-oauth-state:${id}`)

const cookieOptions = (c: Context<AppEnv>) => ({
  httpOnly: true,
  sameSite: 'Lax' as const, // sent on the top-level GET back from Google
  path: '/api/auth/google',
  secure: c.var.services.isHttps(c),
})

/** Stores the PKCE verifier and nonce under a random id for 10 minutes; returns `<id>.<hmac(id)>` and sets it as a cookie. */
export async function issueState(c: Context<AppEnv>, secret: string, pending: Omit<PendingSignIn, 'createdAt'>) {
  const id = randomHex(16)
  await c.var.services.kv.set(stateKey(id), { ...pending, createdAt: Date.now() }, { ttlMs: STATE_TTL_MS })
  const state = `${id}.${await sign(secret, id)}`
  setCookie(c, STATE_COOKIE, state, { ...cookieOptions(c), maxAge: STATE_TTL_MS / 1000 })
  return state
}

/**
 * The pending sign-in for `state`, at most once, or null. The signature and the cookie are checked before
 * the store is touched, so a forged or planted state neither costs a lookup nor burns the real one.
 */
export async function consumeState(c: Context<AppEnv>, secret: string, state: string | undefined): Promise<PendingSignIn | null> {
  const cookie = getCookie(c, STATE_COOKIE)
  deleteCookie(c, STATE_COOKIE, cookieOptions(c))
  const m = state ? STATE_FORMAT.exec(state) : null
  if (!state || !m || !timingSafeEqual(m[2], await sign(secret, m[1]))) return null
  if (!cookie || !timingSafeEqual(cookie, state)) return null
  const pending = await c.var.services.kv.take<PendingSignIn>(stateKey(m[1]))
  // The store's TTL may be coarse; the age is checked here too.
  if (!pending || !(Date.now() - pending.createdAt <= STATE_TTL_MS)) return null
  return pending
}
