import type { RouteConfig } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { createMiddleware } from 'hono/factory'
import type { AppContext, AppEnv } from '../context'
import { ApiError } from './errors'
import type { NamedLimit } from './limits'
import { ErrorSchema, type Middleware, type MiddlewareList, type ResponseConfig } from './openapi'

/** Counts per signed-in user instead of per address; only after `requireSession`. */
export const perUser = (c: AppContext) => {
  if (!c.var.user) throw new Error('perUser needs a signed-in user (requireSession)')
  return `user:${c.var.user.id}`
}

/**
 * Counts one request against `rule` (one store round trip), per client address or per user as the rule
 * says, unless `identify` names the counter. A passing request gets the three `RateLimit-*` headers; a
 * refusal is 429 `{error, code}` with them and `Retry-After`. Never `X-RateLimit-*`. Handlers call it
 * directly to limit only requests that passed validation. A request that passes several limits (per IP and
 * per user) carries the headers of the one closest to refusing it: the fewest remaining, then the smallest limit.
 */
export async function enforceRateLimit(c: AppContext, rule: NamedLimit, identify?: (c: AppContext) => string) {
  const { limiter, clientIp } = c.var.services
  const result = await limiter.limit(rule, identify ? identify(c) : rule.per === 'user' ? perUser(c) : clientIp(c))
  const resetSec = Math.max(0, Math.ceil((result.reset - Date.now()) / 1000))
  const headers = {
    'RateLimit-Limit': String(result.limit),
    'RateLimit-Remaining': String(result.remaining),
    'RateLimit-Reset': String(resetSec),
  }
  if (!result.success) {
    throw new ApiError('RATE_LIMITED', { message: rule.message, headers: { ...headers, 'Retry-After': String(Math.max(1, resetSec)) } })
  }
  const ctx = c as Context<AppEnv>
  const shown = ctx.var.rateLimit
  if (shown && (shown.remaining < result.remaining || (shown.remaining === result.remaining && shown.limit < result.limit))) return
  ctx.set('rateLimit', { limit: result.limit, remaining: result.remaining })
  for (const [k, v] of Object.entries(headers)) c.header(k, v)
}

/** `enforceRateLimit` as middleware, before the route's validation and handler. */
export const rateLimit = (rule: NamedLimit, identify?: (c: AppContext) => string) =>
  createMiddleware<AppEnv>(async (c, next) => {
    await enforceRateLimit(c, rule, identify)
    await next()
  })

// Bounds for documentation: a window is at most a day, a limit at most 100 000.
const seconds = (description: string) => ({ description, schema: { type: 'integer' as const, format: 'int32', minimum: 0, maximum: 86_400 } })
const count = (description: string) => ({ description, schema: { type: 'integer' as const, format: 'int32', minimum: 0, maximum: 100_000 } })

/** The headers every answer that passed a limiter carries. */
export const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': count('Requests the limit allows per window'),
  'RateLimit-Remaining': count('Requests left in the current window'),
  'RateLimit-Reset': seconds('Seconds until the window ends'),
}

const window = (sec: number) =>
  sec % 3600 === 0 ? (sec === 3600 ? 'hour' : `${sec / 3600} hours`) : sec % 60 === 0 ? (sec === 60 ? 'minute' : `${sec / 60} minutes`) : `${sec} s`

/** A rule in words: `10 requests per minute per client address`. */
export const describeLimit = (rule: NamedLimit) =>
  `${rule.limit} requests per ${window(rule.windowSec)} per ${rule.per === 'user' ? 'user' : 'client address'}`

/** Every limiter's stance when the kv store is down: closed (README "When a dependency fails"). */
const KV_DOWN = 'the rate limit store did not answer: refused before anything was done (limits fail closed), `Key-value store unavailable` (`KV_UNAVAILABLE`, `Retry-After`)'

type Config = Omit<RouteConfig, 'middleware'> & { middleware?: readonly Middleware[] }

/**
 * A route behind `rule`, enforced and documented from the same rule: the limiter runs before the route's own
 * middleware (with `signedInRoute`, after `requireSession`), the operation documents its 429 with
 * `Retry-After` and the `RateLimit-*` headers on its 2xx answers. `enforced: 'handler'` documents only: the
 * handler calls `enforceRateLimit(c, rule)` itself, after validation (a malformed request costs no counter).
 */
export function limitedRoute<const R extends Config, By extends 'middleware' | 'handler' = 'middleware'>(rule: NamedLimit, config: R, enforced?: By) {
  const limited = `over ${describeLimit(rule)}: \`${rule.message}\` (\`RATE_LIMITED\`)`
  const declared = config.responses as Record<string, ResponseConfig>
  const own = declared[429]
  const ownUnavailable = declared[503]
  const responses = Object.fromEntries(
    Object.entries(declared).map(([status, res]) => [status, status.startsWith('2') ? { ...res, headers: { ...RATE_LIMIT_HEADERS, ...res.headers } } : res]),
  )
  return {
    ...config,
    middleware: enforced === 'handler' ? config.middleware : [rateLimit(rule), ...(config.middleware ?? [])],
    responses: {
      ...responses,
      429: {
        description: own ? `${own.description}; or ${limited}` : `O${limited.slice(1)}`,
        headers: { ...RATE_LIMIT_HEADERS, 'Retry-After': seconds('Seconds to wait before retrying') },
        content: { 'application/json': { schema: ErrorSchema } },
      },
      503: {
        description: ownUnavailable ? `${ownUnavailable.description}; or ${KV_DOWN}` : `T${KV_DOWN.slice(1)}`,
        headers: { ...ownUnavailable?.headers, 'Retry-After': seconds('Seconds to wait before retrying') },
        content: ownUnavailable?.content ?? { 'application/json': { schema: ErrorSchema } },
      },
    },
  } as unknown as Omit<R, 'middleware'> & {
    middleware: By extends 'handler' ? [...MiddlewareList<R['middleware']>] : [ReturnType<typeof rateLimit>, ...MiddlewareList<R['middleware']>]
  }
}
