import { z } from '@hono/zod-openapi'

/** Fields more than one family declares: request fields with the spec's messages, and bounded counts. */
export const emailField = () =>
  z
    .string({ error: 'Email is required' })
    .trim()
    .min(1, 'Email is required')
    .max(254, 'Invalid email')
    .pipe(z.email({ error: 'Invalid email' }))

/** A password being set (sign-up, change, reset): 8 to 256 characters. */
export const newPasswordField = (label = 'Password') =>
  z
    .string({ error: `${label} is required` })
    .min(8, `${label} must be at least 8 characters`)
    .max(256, `${label} must be at most 256 characters`)

/** A count or number of days or seconds (a 32-bit column or less), documented with its bounds. */
export const countField = () => z.number().int().min(0).max(2_147_483_647).openapi({ format: 'int32' })
