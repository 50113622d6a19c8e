import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../context'
import { hmacSha256Hex, randomHex, timingSafeEqual } from '../crypto'
import { ApiError } from '../http/errors'

/** A CSRF token is good for two hours: long enough for a login form left open, short enough to go stale. */
export const CSRF_TTL_SEC = 2 * 60 * 60

export const requireSessionSecret = (secret: string | undefined): string =>
  secret ?? (() => {
    throw new ApiError('MISCONFIGURED', 'Session secret not configured')
  })()

/** `token` is `<random>.<issued-at seconds>`; `signed` its HMAC-SHA256 under SESSION_SECRET. */
export async function issueCsrfToken(secret: string, now = Date.now()) {
  const token = `${randomHex(16)}.${Math.floor(now / 1000)}`
  const signed = await hmacSha256Hex(secret, token)
  return { token, signed, header: `${token}:${signed}` }
}

export async function verifyCsrfHeader(secret: string, header: string | undefined, now = Date.now()) {
  if (!header || header.length > 256) return false
  const sep = header.lastIndexOf(':')
  if (sep <= 0) return false
  const token = header.slice(0, sep)
  const signed = header.slice(sep + 1)
  const issuedAt = Number(token.split('.')[1])
  if (!Number.isInteger(issuedAt)) return false
  const age = now / 1000 - issuedAt
  if (age < -60 || age > CSRF_TTL_SEC) return false
  return timingSafeEqual(await hmacSha256Hex(secret, token), signed)
}

/** 403 unless `x-csrf-token` (or `x-xsrf-token`) carries a valid, fresh `{token}:{signed}`. */
export const requireCsrf = createMiddleware<AppEnv>(async (c, next) => {
  const secret = requireSessionSecret(c.var.services.config.sessionSecret)
  const header = c.req.header('x-csrf-token') ?? c.req.header('x-xsrf-token')
  if (!(await verifyCsrfHeader(secret, header))) throw new ApiError('CSRF_INVALID')
  await next()
})
