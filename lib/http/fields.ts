import { z } from '@hono/zod-openapi'

/** Request fields more than one family validates, with the spec's messages. */
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
