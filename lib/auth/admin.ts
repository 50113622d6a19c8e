import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../context'
import { ApiError } from '../http/errors'
import { verifyIdentity } from './identity'
import { isAdminEmail } from './session'

/**
 * Spec "Authentication" 3: the verified `x-user-email` must be in `ADMIN_EMAILS` (case-insensitive),
 * else 403 `ADMIN_REQUIRED`. Meant to follow `identityHeaders`; verifies the headers itself when it
 * does not, so it can never act on an unchecked email.
 */
export const requireAdminIdentity = createMiddleware<AppEnv>(async (c, next) => {
  const identity = c.var.identity ?? (await verifyIdentity(c))
  if (!isAdminEmail(c, identity.email)) throw new ApiError(403, 'Admin access required', { code: 'ADMIN_REQUIRED' })
  await next()
})
