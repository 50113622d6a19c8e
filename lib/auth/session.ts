import { and, eq, gt } from 'drizzle-orm'
import type { Context } from 'hono'
import { getCookie } from 'hono/cookie'
import { createMiddleware } from 'hono/factory'
import { sessions, users } from '../../schema'
import type { AppEnv, SessionUser } from '../context'
import { randomHex, sha256Hex } from '../crypto'
import { ApiError } from '../http/errors'

export const SESSION_COOKIE = 'service-session'
export const SESSION_TTL_MS = 30 * 24 * 60 * 60 * 1000

/** A new session token: 256 bits from the CSPRNG. Only its SHA-256 is stored. */
export const newSessionToken = () => randomHex(32)
export const hashSessionToken = (token: string) => sha256Hex(token)

export const isAdminEmail = (c: Context<AppEnv>, email: string) =>
  c.var.services.config.ADMIN_EMAILS.includes(email.toLowerCase())

/** The signed-in user from the session cookie, or null when absent, unknown or expired. */
export async function readSession(c: Context<AppEnv>): Promise<SessionUser | null> {
  if (c.var.user) return c.var.user
  const token = getCookie(c, SESSION_COOKIE)
  if (!token || token.length > 256) return null
  const [row] = await c.var.services.db
    .select({ id: users.id, email: users.email, name: users.name })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(and(eq(sessions.tokenHash, await hashSessionToken(token)), gt(sessions.expiresAt, new Date())))
    .limit(1)
  if (!row) return null
  const user = { ...row, isAdmin: isAdminEmail(c, row.email) }
  c.set('user', user)
  return user
}

/** 401 `Unauthorized` without a valid session; sets `c.var.user`. */
export const requireSession = createMiddleware<AppEnv>(async (c, next) => {
  if (!(await readSession(c))) throw new ApiError(401, 'Unauthorized')
  await next()
})

/** Session whose email is in `ADMIN_EMAILS`: 401 without a session, 403 `ADMIN_REQUIRED` otherwise. */
export const requireAdminSession = createMiddleware<AppEnv>(async (c, next) => {
  const user = await readSession(c)
  if (!user) throw new ApiError(401, 'Unauthorized')
  if (!user.isAdmin) throw new ApiError(403, 'Admin access required', { code: 'ADMIN_REQUIRED' })
  await next()
})
