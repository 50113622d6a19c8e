import { z } from '@hono/zod-openapi'
import { ERROR_CODES } from './error-codes'

/** The error envelope every route documents. */
export const ErrorSchema = z
  .object({
    error: z.string().openapi({ description: 'A human-readable message (the exact text where the contract gives one)' }),
    code: z.enum(ERROR_CODES).openapi({ description: 'Stable and machine-readable: switch on it. The catalogue is in the API description.' }),
  })
  .openapi('Error', { description: 'Every error answer: `{error, code}`, some with documented extra fields (`issues`).' })

export const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: ErrorSchema } },
})

export const ok = <T extends z.ZodType>(schema: T, description = 'OK') => ({
  description,
  content: { 'application/json': { schema } },
})
