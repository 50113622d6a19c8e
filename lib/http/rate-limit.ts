import { createMiddleware } from 'hono/factory'
import type { AppContext, AppEnv } from '../context'
import { ApiError } from './errors'
import type { NamedLimit } from './limits'

/**
 * Counts one request against `rule` (one store round trip). A passing request gets the three `RateLimit-*`
 * headers; a refusal is 429 `{error}` with them and `Retry-After`. Never `X-RateLimit-*`. Handlers call it
 * directly to limit only requests that passed validation.
 */
export async function enforceRateLimit(c: AppContext, rule: NamedLimit, identify?: (c: AppContext) => string) {
  const { limiter, clientIp } = c.var.services
  const result = await limiter.limit(rule, identify ? identify(c) : clientIp(c))
  const resetSec = Math.max(0, Math.ceil((result.reset - Date.now()) / 1000))
  const headers = {
    'RateLimit-Limit': String(result.limit),
    'RateLimit-Remaining': String(result.remaining),
    'RateLimit-Reset': String(resetSec),
  }
  if (!result.success) {
    throw new ApiError(429, rule.message, { code: 'RATE_LIMITED', headers: { ...headers, 'Retry-After': String(Math.max(1, resetSec)) } })
  }
  for (const [k, v] of Object.entries(headers)) c.header(k, v)
}

/** Counts per signed-in user instead of per address; only after `requireSession`. */
export const perUser = (c: AppContext) => {
  if (!c.var.user) throw new Error('perUser needs a signed-in user (requireSession)')
  return `user:${c.var.user.id}`
}

/** `enforceRateLimit` as middleware, before the route's validation and handler. */
export const rateLimit = (rule: NamedLimit, identify?: (c: AppContext) => string) =>
  createMiddleware<AppEnv>(async (c, next) => {
    await enforceRateLimit(c, rule, identify)
    await next()
  })
