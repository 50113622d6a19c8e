import type { Context } from 'hono'
import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../context'
import { ApiError } from './errors'
import type { NamedLimit } from './limits'

/**
 * One store round trip per request. Every response that passed the limiter carries the three
 * `RateLimit-*` headers; a refusal is 429 `{error}` with them and `Retry-After`. Never `X-RateLimit-*`.
 */
export const rateLimit = (rule: NamedLimit, identify?: (c: Context<AppEnv>) => string) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const { limiter, clientIp } = c.var.services
    const result = await limiter.limit(rule, identify ? identify(c) : clientIp(c))
    const resetSec = Math.max(0, Math.ceil((result.reset - Date.now()) / 1000))
    const headers = {
      'RateLimit-Limit': String(result.limit),
      'RateLimit-Remaining': String(result.remaining),
      'RateLimit-Reset': String(resetSec),
    }
    if (!result.success) {
      throw new ApiError(429, rule.message, { headers: { ...headers, 'Retry-After': String(Math.max(1, resetSec)) } })
    }
    for (const [k, v] of Object.entries(headers)) c.header(k, v)
    await next()
  })
