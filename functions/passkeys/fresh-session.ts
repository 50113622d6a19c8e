import { eq, sql } from 'drizzle-orm'
import { getCookie } from 'hono/cookie'
import { createMiddleware } from 'hono/factory'
import { hashSessionToken, SESSION_COOKIE } from '../../lib/auth/session'
import type { SignedInEnv } from '../../lib/context'
import { asUser } from '../../lib/db/rls'
import { ApiError } from '../../lib/http/errors'
import { sessions } from '../../schema'

/** How recent a sign-in must be to add a passkey (a lasting credential). */
export const FRESH_SESSION_MINUTES = 10

export const reauthRequired = () =>
  new ApiError('REAUTH_REQUIRED', `Sign in again to add a passkey: it needs a sign-in from the last ${FRESH_SESSION_MINUTES} minutes`)

/**
 * After `requireSession`: 403 `REAUTH_REQUIRED` unless the presented session was created within the last
 * `FRESH_SESSION_MINUTES`, so a stolen, older cookie cannot turn itself into a permanent credential. Compared
 * on the database clock, the one that stamped `created_at`.
 */
export const requireFreshSession = createMiddleware<SignedInEnv>(async (c, next) => {
  // requireSession has read this cookie, so it is present and resolved to a live session.
  const tokenHash = await hashSessionToken(getCookie(c, SESSION_COOKIE)!)
  const [row] = await asUser(c, (tx) =>
    tx
      .select({ fresh: sql<boolean>`${sessions.createdAt} > now() - make_interval(mins => ${FRESH_SESSION_MINUTES})` })
      .from(sessions)
      .where(eq(sessions.tokenHash, tokenHash)),
  )
  if (!row?.fresh) throw reauthRequired()
  await next()
})
