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

/** A count in a cron receiver's answer (a sweep's page, a batch), far under these bounds. */
export const tallyField = (description: string) => z.number().int().min(0).max(100_000).openapi({ format: 'int32', description })

/**
 * A wallet proof's two body fields (lib/auth/wallet-proof.ts). Optional here so that a request without them is
 * 401 `SIGNATURE_REQUIRED` (the route's own check), not a validation error; bounded and shaped when present.
 */
export const walletProofFields = (wallet: string) => ({
  message: z
    .string({ error: 'message must be a string' })
    .max(8192, 'Message too long')
    .optional()
    .openapi({ description: `The EIP-4361 message proving \`${wallet}\` (see the description)` }),
  // ERC-6492 wraps the owner's signature with factory calldata: far longer than 65 bytes.
  signature: z
    .string({ error: 'Invalid signature' })
    .max(16_384, 'Invalid signature')
    .regex(/^0x(?:[0-9a-fA-F]{2})+$/, 'Invalid signature')
    .optional()
    .openapi({ description: `\`${wallet}\`'s signature of \`message\` (EOA, ERC-1271 or ERC-6492), 0x-prefixed hex` }),
})
