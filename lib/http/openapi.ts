import { z } from '@hono/zod-openapi'

/** The error envelope every route documents. */
export const ErrorSchema = z
  .object({ error: z.string(), code: z.string().optional() })
  .openapi('Error', { description: 'Every error: `{error}`, some with a machine-readable `code`.' })

export const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: ErrorSchema } },
})

export const ok = <T extends z.ZodType>(schema: T, description = 'OK') => ({
  description,
  content: { 'application/json': { schema } },
})
