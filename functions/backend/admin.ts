import { eq } from 'drizzle-orm'
import type { Context } from 'hono'
import { createMiddleware } from 'hono/factory'
import { users } from '../../schema'
import type { AppEnv } from '../../lib/context'
import { asService } from '../../lib/db/rls'
import { ApiError } from '../../lib/http/errors'
import { verifyIdentity } from '../../lib/auth/identity'
import { isListedAdminEmail } from '../../lib/auth/session'

/**
 * The backend's admin test for an email taken from verified identity headers or an API key's owner: listed in
 * `ADMIN_EMAILS` (case-insensitive) AND the address of a user whose email is verified, so signing up with an
 * admin's address (never verified) gives nothing. Only listed emails cost a lookup.
 */
export async function isVerifiedAdminEmail(c: Context<AppEnv>, email: string | undefined) {
  if (!email || !isListedAdminEmail(c, email)) return false
  const [row] = await asService(c.var.services.db, 'identityLookup', (tx) =>
    tx.select({ verifiedAt: users.emailVerifiedAt }).from(users).where(eq(users.email, email.toLowerCase())).limit(1),
  )
  return !!row?.verifiedAt
}

/**
 * Spec "Authentication" 3: the verified `x-user-email` must be in `ADMIN_EMAILS` (case-insensitive) and belong
 * to a user with a verified email, else 403 `ADMIN_REQUIRED`. Meant to follow `identityHeaders`; verifies the
 * headers itself when it does not, so it can never act on an unchecked email.
 */
export const requireAdminIdentity = createMiddleware<AppEnv>(async (c, next) => {
  const identity = c.var.identity ?? (await verifyIdentity(c))
  if (!(await isVerifiedAdminEmail(c, identity.email))) throw new ApiError('ADMIN_REQUIRED')
  await next()
})
