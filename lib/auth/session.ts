import { and, eq, lt } from 'drizzle-orm'
import type { Context, MiddlewareHandler } from 'hono'
import { deleteCookie, getCookie, setCookie } from 'hono/cookie'
import { createMiddleware } from 'hono/factory'
import { sessions, users } from '../../schema'
import type { AppContext, AppEnv, SignedInEnv } from '../context'
import { randomHex, sha256Hex } from '../crypto'
import { ApiError } from '../http/errors'
import { isVerifiedAdmin } from './accounts'
import { afterSessionsEnded, type BoundSession, deleteSessions } from './session-bound'
import { type CachedUser, readStamp } from './session-cache'

export const SESSION_COOKIE = 'service-session'
export const SESSION_TTL_MS = 30 * 24 * 60 * 60 * 1000

/** A new session token: 256 bits from the CSPRNG. Only its SHA-256 is stored. */
export const newSessionToken = () => randomHex(32)
export const hashSessionToken = (token: string) => sha256Hex(token)

/** An email listed in `ADMIN_EMAILS` (case-insensitive). On its own it grants nothing: see `isAdmin`. */
export const isListedAdminEmail = (c: Context<AppEnv>, email: string | undefined) =>
  !!email && c.var.services.config.ADMIN_EMAILS.includes(email.toLowerCase())

/** Admin rights follow a verified email in `ADMIN_EMAILS`: an unverified sign-up with that address gets none. */
export const isAdmin = (c: Context<AppEnv>, user: { email: string; emailVerifiedAt: Date | null }) =>
  isVerifiedAdmin(c.var.services.config, user)

const cookieOptions = (c: Context<AppEnv>) => ({
  httpOnly: true,
  sameSite: 'Lax' as const,
  path: '/',
  secure: c.var.services.isHttps(c),
})

/** Creates a session row (a new one at every sign-in), sets the cookie, and drops the user's expired sessions. */
export async function startSession(c: Context<AppEnv>, userId: string) {
  const { reader, clientIp } = c.var.services
  const token = newSessionToken()
  const expiresAt = new Date(Date.now() + SESSION_TTL_MS)
  const tokenHash = await hashSessionToken(token)
  await reader.asService('sessionLifecycle', (db) => [
    db.delete(sessions).where(and(eq(sessions.userId, userId), lt(sessions.expiresAt, new Date()))),
    db.insert(sessions).values({ tokenHash, userId, expiresAt, ip: clientIp(c), userAgent: c.req.header('user-agent')?.slice(0, 512) }),
  ])
  setCookie(c, SESSION_COOKIE, token, { ...cookieOptions(c), maxAge: SESSION_TTL_MS / 1000, expires: expiresAt })
  return { expiresAt }
}

/**
 * Deletes the presented session (if any), makes the user's cached sessions stale, closes what it opened (its
 * permission sockets and log streams), and clears the cookie.
 */
export async function endSession(c: Context<AppEnv>) {
  const token = getCookie(c, SESSION_COOKIE)
  if (token && token.length <= 256) {
    const tokenHash = await hashSessionToken(token)
    const { services } = c.var
    const ended = await services.reader.asService('sessionLifecycle', (db) => deleteSessions(db, { only: tokenHash }))
    services.sessionCache.forget(token)
    await afterSessionsEnded(c, ended)
  }
  deleteCookie(c, SESSION_COOKIE, cookieOptions(c))
}

/**
 * The session the signed-in caller presented (after `requireSession`): what it opens that outlasts the request
 * is bound to it (lib/auth/session-bound.ts).
 */
export async function presentedSession(c: Context<SignedInEnv>): Promise<BoundSession> {
  const token = getCookie(c, SESSION_COOKIE)
  if (!token) throw new ApiError('UNAUTHORIZED')
  const user = c.var.user as CachedUser
  return { userId: user.id, sessionHash: await hashSessionToken(token), expiresAt: new Date(user.expiresAt).getTime() }
}

/**
 * The signed-in user from the session cookie, or null when absent, unknown or expired (expired rows are
 * removed). A session this isolate has seen costs one kv read (its user's revocation stamp) and no query.
 */
export async function readSession(c: Context<AppEnv>): Promise<CachedUser | null> {
  const cached = c.get('user') as CachedUser | undefined
  if (cached) return cached
  const token = getCookie(c, SESSION_COOKIE)
  if (!token || token.length > 256) return null
  const { services } = c.var
  const hit = services.sessionCache.fresh(token)
  if (hit) {
    const stamp = await readStamp(services, hit.user.id)
    if (stamp === null || (stamp !== undefined && hit.validatedAt > stamp)) {
      c.set('user', hit.user)
      return hit.user
    }
    services.sessionCache.forget(token)
  }
  const tokenHash = await hashSessionToken(token)
  const validatedAt = Date.now() // before the lookup: a revocation stamped after this makes the entry stale
  // One query: the session with its user and whether that user's email is verified (admin needs it).
  const [row] = await services.reader.asService('sessionLookup', (db) =>
    db
      .select({ id: users.id, email: users.email, name: users.name, emailVerifiedAt: users.emailVerifiedAt, expiresAt: sessions.expiresAt })
      .from(sessions)
      .innerJoin(users, eq(users.id, sessions.userId))
      .where(eq(sessions.tokenHash, tokenHash))
      .limit(1),
  )
  if (!row) return null
  if (row.expiresAt <= new Date()) {
    // Expired: what it opened closes by its own expiry check (lib/auth/session-bound.ts), no notice needed.
    await services.reader.asService('sessionLifecycle', (db) => db.delete(sessions).where(eq(sessions.tokenHash, tokenHash)))
    return null
  }
  const { emailVerifiedAt: _, ...rest } = row
  const user = { ...rest, isAdmin: isAdmin(c, row) }
  services.sessionCache.store(token, user, validatedAt)
  c.set('user', user)
  return user
}

/** The methods `assertTrustedOrigin` checks (signedInRoute documents its 403 from the same set). */
export const UNSAFE_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/** Whether the request comes from a dashboard page (`Origin` in APP_ORIGIN) or names no page (no `Origin`). */
export function isTrustedOrigin(c: AppContext) {
  const origin = c.req.header('origin')
  return origin === undefined || c.var.services.config.APP_ORIGIN.includes(origin)
}

/**
 * Cookie-authenticated unsafe requests must not come from a foreign page (`Origin` outside APP_ORIGIN); with
 * `always`, any method (a WebSocket upgrade is a GET, and the socket it opens can write).
 */
export function assertTrustedOrigin(c: AppContext, always = false) {
  if ((always || UNSAFE_METHODS.has(c.req.method)) && !isTrustedOrigin(c)) {
    throw new ApiError('ORIGIN_NOT_ALLOWED', {
      extra: { hint: 'This Origin is not trusted: the server trusts those in its APP_ORIGIN setting' },
    })
  }
}

const SESSION_ONLY_HINT =
  'This route takes a session cookie (sign in: POST /api/auth/login), not an API key'

/** The session's user, or 401 `Unauthorized`; a cookie-authenticated write must also come from a trusted Origin. */
async function signedIn(c: Context<AppEnv>) {
  const user = await readSession(c)
  if (!user) {
    // An API key sent here is not refused as wrong: the route takes no key at all, which is what the caller needs to know.
    const bearer = /^Bearer\s+sk_/i.test(c.req.header('authorization') ?? '')
    throw new ApiError('UNAUTHORIZED', bearer ? { extra: { hint: SESSION_ONLY_HINT } } : undefined)
  }
  assertTrustedOrigin(c)
  return user
}

// Both are typed as handing on a `SignedInEnv`: they call `next()` only once `readSession` has set `user`.

/** 401 `Unauthorized` without a valid session; sets `c.var.user`, which the handlers after it read unchecked. */
export const requireSession = createMiddleware<AppEnv>(async (c, next) => {
  await signedIn(c)
  await next()
}) as unknown as MiddlewareHandler<SignedInEnv>

/** Session whose verified email is in `ADMIN_EMAILS`: 401 without a session, 403 `ADMIN_REQUIRED` otherwise. */
export const requireAdminSession = createMiddleware<AppEnv>(async (c, next) => {
  const user = await signedIn(c)
  if (!user.isAdmin) throw new ApiError('ADMIN_REQUIRED')
  await next()
}) as unknown as MiddlewareHandler<SignedInEnv>
