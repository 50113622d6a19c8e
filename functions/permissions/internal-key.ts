import { createMiddleware } from 'hono/factory'
import { bearerToken, sameSecret } from '../../lib/auth/shared-key'
import type { AppEnv } from '../../lib/context'
import { ApiError } from '../../lib/http/errors'
import { errorResponse } from '../../lib/http/openapi'

/**
 * The hook routes' guard: `Authorization: Bearer <INTERNAL_API_KEY>`, compared in constant time. No key
 * configured is 503 `Internal API key not configured` (a deployment fault, not the caller's: the hook, being
 * fail-closed, denies every call meanwhile); a missing or wrong key is 401 `Unauthorized`, the same answer for both.
 */
export const requireInternalKey = createMiddleware<AppEnv>(async (c, next) => {
  const expected = c.var.services.config.INTERNAL_API_KEY
  if (!expected) throw new ApiError('NOT_CONFIGURED', 'Internal API key not configured')
  const token = bearerToken(c.req.header('authorization'))
  if (!token || !(await sameSecret(token, expected))) throw new ApiError('UNAUTHORIZED')
  await next()
})

/** The answers `requireInternalKey` adds to a route's documented ones. */
export const internalKeyResponses = {
  401: errorResponse('`Unauthorized`: no Bearer token, or not the internal key (`UNAUTHORIZED`)'),
  503: errorResponse('`Internal API key not configured`: this deployment has no `INTERNAL_API_KEY` (`NOT_CONFIGURED`)'),
}
