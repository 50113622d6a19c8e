import { createMiddleware } from 'hono/factory'
import type { z } from 'zod'
import { ApiError } from './errors'

type HookResult = { success: true; data?: unknown; target?: string } | { success: false; error: z.ZodError; target?: string }
type Issue = { path: string; message: string; allowed?: string[] }

const INVALID_TEXT = 'Text must not contain NUL or unpaired surrogate characters'
// Postgres refuses 0x00 in text; a lone surrogate is not Unicode and cannot be stored or sent faithfully.
const HOSTILE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

export const isHostileText = (s: string) => HOSTILE.test(s)

/** The path of the first string (value or key) in `value` that `isHostileText`; iterative, so deep nesting is safe. */
export function findHostileText(value: unknown): string | undefined {
  const stack: Array<[unknown, string]> = [[value, '']]
  while (stack.length) {
    const [v, path] = stack.pop()!
    if (typeof v === 'string') {
      if (isHostileText(v)) return path
    } else if (v && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) {
        const p = path ? `${path}.${k}` : k
        if (isHostileText(k)) return p
        stack.push([child, p])
      }
    }
  }
  return undefined
}

const HOSTILE_ALL = new RegExp(HOSTILE.source, 'g')
/** An echoed path or message at most `max` characters (code points, as the document's maxLength counts them). */
const clip = (text: string, max = 256) => {
  const chars = [...text]
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : text
}

const refuse = (all: Issue[]) => {
  // A path made of request keys is echoed: never echo the offending characters themselves, nor an unbounded key.
  const issues = all.map((i) => ({ ...i, path: clip(i.path.replace(HOSTILE_ALL, '\uFFFD')), message: clip(i.message, 1024) }))
  const allowed = issues[0]?.allowed
  const hint = allowed ? `${issues[0].path || 'The value'} takes one of: ${allowed.join(', ')}` : undefined
  return new ApiError('VALIDATION', { message: issues[0]?.message ?? 'Invalid request', extra: { issues, ...(hint && { hint }) } })
}

/**
 * Every route's zod validation ends here (the routers' `defaultHook`). A failure is 400
 * `{error, code: 'VALIDATION', issues}`, `error` being the first issue's message, so a schema can carry the
 * spec's exact wording. A success is scanned too: no string of any body, query, param or header reaches a
 * handler (or Postgres) with a NUL or an unpaired surrogate, whatever its schema says.
 */
export const validationHook = (result: HookResult) => {
  if (!result.success) {
    throw refuse(
      result.error.issues.map((i) => ({
        path: i.path.join('.'),
        message: i.message,
        // A field with a fixed set of values says which (an unknown debug command lists the ten allowed).
        ...(i.code === 'invalid_value' && i.values.every((v) => typeof v === 'string') && { allowed: i.values as string[] }),
      })),
    )
  }
  const at = findHostileText(result.data)
  if (at !== undefined) throw refuse([{ path: at, message: INVALID_TEXT }])
}

/**
 * The hook of routes whose JSON body is a union discriminated by `action` (billing, calendar): an unknown or
 * missing `action` is 400 `Invalid action` (`INVALID_ACTION`); anything else goes to `validationHook`.
 */
export const actionHook = (result: HookResult): undefined => {
  if (!result.success && result.error.issues.some((i) => i.code === 'invalid_union' && i.path.join('.') === 'action')) {
    throw new ApiError('INVALID_ACTION')
  }
  validationHook(result)
  return undefined
}

/**
 * The same rule for the URL, before routing, so path params and query strings are covered even where a
 * route reads them without zod. A NUL can only arrive percent-encoded; a lone surrogate cannot be
 * percent-encoded as valid UTF-8 (hono keeps such a sequence as its literal `%XX` text).
 */
export const refuseHostileUrl = createMiddleware(async (c, next) => {
  const url = c.req.url
  if (url.includes('%') && /%00/i.test(url)) {
    const { pathname, searchParams } = new URL(url)
    const keys = [...searchParams].filter(([k, v]) => isHostileText(k) || isHostileText(v)).map(([k]) => k)
    const issues = /%00/i.test(pathname) ? [{ path: 'path', message: INVALID_TEXT }] : []
    throw refuse([...issues, ...keys.map((k) => ({ path: k, message: INVALID_TEXT }))])
  }
  await next()
})

/** A required JSON request body for `createRoute` (zod-openapi skips validation of optional bodies). */
export const jsonBody = <T extends z.ZodType>(schema: T, description?: string) => ({
  required: true,
  description,
  content: { 'application/json': { schema } },
})
