import type { Context } from 'hono'
import type { AppEnv, SessionUser } from '../../lib/context'
import { ApiError } from '../../lib/http/errors'
import { assertTrustedOrigin, readSession } from '../../lib/auth/session'

export type ProvisionUser = SessionUser & { synthetic?: true }

/**
 * The caller of `POST /api/provision` (spec "Authentication" 5, admin session fallback). The spec's
 * fallback is for a session carrying an admin email but no user id. Our sessions always join a user
 * row, so in practice this is the session user, with `isAdmin` from `ADMIN_EMAILS`; the synthetic
 * `admin:<email>` user is kept for a session whose user id is empty. 401 without a session. Only the
 * session decides: the request body (its `email` included) is never read, so it cannot elevate anyone.
 */
export async function provisionSession(c: Context<AppEnv>): Promise<ProvisionUser> {
  const user = await readSession(c)
  if (!user) throw new ApiError('UNAUTHORIZED')
  assertTrustedOrigin(c)
  if (!user.id && user.isAdmin) {
    return { id: `admin:${user.email.toLowerCase()}`, email: user.email, name: user.email, isAdmin: true, synthetic: true }
  }
  if (!user.id) throw new ApiError('UNAUTHORIZED')
  const { id, email, name, isAdmin } = user
  return { id, email, name, isAdmin }
}
