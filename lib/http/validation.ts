import type { z } from 'zod'
import { ApiError } from './errors'

type HookResult = { success: true } | { success: false; error: z.ZodError }

/**
 * Shapes every failed request validation as 400 `{error, code: 'VALIDATION', issues}`. `error` is the
 * first issue's message, so a schema can carry the spec's exact wording (e.g. `Message required`).
 */
export const validationHook = (result: HookResult) => {
  if (result.success) return
  const issues = result.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }))
  throw new ApiError(400, issues[0]?.message ?? 'Invalid request', { code: 'VALIDATION', extra: { issues } })
}

/** A required JSON request body for `createRoute` (zod-openapi skips validation of optional bodies). */
export const jsonBody = <T extends z.ZodType>(schema: T, description?: string) => ({
  required: true,
  description,
  content: { 'application/json': { schema } },
})
