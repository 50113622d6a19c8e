import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../context'
import { sha256Hex, timingSafeEqual } from '../crypto'
import { ApiError } from '../http/errors'

/** The token of `Authorization: Bearer <token>` (scheme case-insensitive, RFC 7235), or null. */
export function bearerToken(header: string | undefined): string | null {
  const m = header?.match(/^Bearer +(\S+) *$/i)
  return m ? m[1] : null
}

/** Constant time and length-blind: both sides are hashed to 32 bytes before comparing. */
export const sameSecret = async (presented: string, expected: string) =>
  timingSafeEqual(await sha256Hex(presented), await sha256Hex(expected))

/**
 * Spec "Authentication" 1, backend core routes: `Authorization: Bearer <INTERNAL_API_KEY>`.
 * 500 `Server misconfigured` when the key is unset (checked first: with no key nothing can match, and
 * refusing loudly beats a 401/403 that hides the misconfiguration); 401 `Unauthorized` without a Bearer
 * token; 403 `Forbidden` when it does not match.
 */
export const requireSharedKey = createMiddleware<AppEnv>(async (c, next) => {
  const expected = c.var.services.config.INTERNAL_API_KEY
  if (!expected) throw new ApiError('MISCONFIGURED')
  const token = bearerToken(c.req.header('authorization'))
  if (!token) throw new ApiError('UNAUTHORIZED')
  if (!(await sameSecret(token, expected))) throw new ApiError('FORBIDDEN')
  await next()
})

/** The spec's standalone guard: the same checks as `requireSharedKey`, under the name the spec uses. */
export const requireAuth = requireSharedKey
