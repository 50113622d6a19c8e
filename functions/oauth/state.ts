import type { Context } from 'hono'
import { deleteCookie, getCookie, setCookie } from 'hono/cookie'
import type { AppEnv } from '../../lib/context'
import { signToken, verifyToken } from '../../lib/auth/signed-token'
import { randomHex, timingSafeEqual } from '../../lib/crypto'

export const STATE_TTL_MS = 10 * 60 * 1000
/** Binds the flow to the browser that started it: a callback link planted by someone else is refused (login CSRF). */
export const STATE_COOKIE = 'google-oauth-state'
const STATE_ID = /^[0-9a-f]{32}$/

export interface PendingSignIn {
  verifier: string
  nonce: string
  redirectUri: string
  createdAt: number
}

const stateKey = (id: string) => `oauth:google:state:${id}`

const cookieOptions = (c: Context<AppEnv>) => ({
  httpOnly: true,
  sameSite: 'Lax' as const, // sent on the top-level GET back from Google
  path: '/api/auth/google',
  secure: c.var.services.isHttps(c),
})

/**
 * Stores the PKCE verifier and nonce under a random id for 10 minutes; returns a signed token naming the id (`jti`,
 * lib/auth/signed-token.ts) and sets it as a cookie.
 */
export async function issueState(c: Context<AppEnv>, secret: string, pending: Omit<PendingSignIn, 'createdAt'>) {
  const id = randomHex(16)
  await c.var.services.kv.set(stateKey(id), { ...pending, createdAt: Date.now() }, { ttlMs: STATE_TTL_MS })
  const state = await signToken(secret, 'google-oauth-state', { jti: id }, { expiresInSec: STATE_TTL_MS / 1000 })
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
  const id = state ? (await verifyToken(secret, 'google-oauth-state', state))?.jti : undefined
  if (!state || typeof id !== 'string' || !STATE_ID.test(id)) return null
  if (!cookie || !timingSafeEqual(cookie, state)) return null
  const pending = await c.var.services.kv.take<PendingSignIn>(stateKey(id))
  // The store's TTL may be coarse; the age is checked here too.
  if (!pending || !(Date.now() - pending.createdAt <= STATE_TTL_MS)) return null
  return pending
}
