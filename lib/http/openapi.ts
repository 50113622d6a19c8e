import { type RouteConfig, z } from '@hono/zod-openapi'
import type { MiddlewareHandler } from 'hono'
import { ERROR_CODES } from './errors'

/** The error envelope every route documents. */
export const ErrorSchema = z
  .object({
    error: z.string().max(1024).openapi({ description: 'A human-readable message (the exact text where the contract gives one)' }),
    code: z.enum(ERROR_CODES).openapi({ description: 'Stable and machine-readable: switch on it. The catalogue is in the API description.' }),
    hint: z.string().max(1024).optional().openapi({ description: 'How to fix it, when the fix is the caller’s' }),
    issues: z
      .array(
        z.object({
          path: z.string().max(1024),
          message: z.string().max(1024),
          allowed: z.array(z.string().max(256)).max(256).optional().openapi({ description: 'The values the field takes' }),
        }),
      )
      .max(256)
      .optional()
      .openapi({ description: 'What failed validation (`VALIDATION`)' }),
  })
  .openapi('Error', { description: 'Every error answer: `{error, code}`, some with `hint`, `issues` or other documented extra fields.' })

export const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: ErrorSchema } },
})

export const ok = <T extends z.ZodType>(schema: T, description = 'OK') => ({
  description,
  content: { 'application/json': { schema } },
})

/** Any route middleware; each entry of a route's `middleware` keeps its own env type. */
export type Middleware = MiddlewareHandler<any, any, any>
/** A route's `middleware` as a list (none: empty), for helpers that add to it. */
export type MiddlewareList<M> = M extends readonly Middleware[] ? M : []
/** A documented response written out (not a `$ref`). */
export type ResponseConfig = Exclude<RouteConfig['responses'][string], { $ref: string }>
