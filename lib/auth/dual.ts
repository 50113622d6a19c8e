import type { MiddlewareHandler } from 'hono'
import { createMiddleware } from 'hono/factory'
import type { AppEnv, SignedInEnv } from '../context'
import { ApiError } from '../http/errors'
import { findApiKey } from './api-keys'
import { bearerToken } from './shared-key'
import { assertTrustedOrigin, isAdmin, readSession } from './session'

/**
 * Spec "Authentication" 6: the session cookie first (with the trusted-origin check cookies need), then
 * `Authorization: Bearer <API key>` through `findApiKey`; otherwise 401 `Unauthorized`. Sets
 * `c.var.user`, and `c.var.apiKeyId` for a key. A valid session wins: a key sent alongside is ignored.
 * Typed as handing on a `SignedInEnv` (as `requireSession`): `next()` runs only once `user` is set.
 */
export const requireSessionOrApiKey = createMiddleware<AppEnv>(async (c, next) => {
  if (await readSession(c)) {
    assertTrustedOrigin(c)
    return next()
  }
  const token = bearerToken(c.req.header('authorization'))
  const found = token ? await findApiKey(c.var.services.reader, token) : null
  if (!found) throw new ApiError('UNAUTHORIZED')
  const { id, email, name } = found.user
  // Admin as on the web: the key owner's email must be verified as well as listed.
  c.set('user', { id, email, name, isAdmin: isAdmin(c, found.user) })
  c.set('apiKeyId', found.key.id)
  await next()
}) as unknown as MiddlewareHandler<SignedInEnv>
