import { z } from '@hono/zod-openapi'

export const ChallengeSchema = z.string().max(1024).openapi({
  description: '`0x` + 64 hex: 32 random bytes, valid for `PASSKEY_CHALLENGE_TTL_MS` (5 minutes) and usable once',
  example: `0x${'ab'.repeat(32)}`,
})

const invalid = 'Invalid credential'
/** The browser's `PublicKeyCredential` JSON (e.g. from @simplewebauthn/browser); checked in full by the verifier. */
export const CredentialField = z
  .looseObject(
    {
      id: z.string({ error: invalid }).min(1, invalid).max(1400, invalid),
      response: z.looseObject({ clientDataJSON: z.string({ error: invalid }).max(8192) }, { error: invalid }),
    },
    { error: (iss) => (iss.input === undefined ? 'Credential is required' : 'Credential must be an object') },
  )
  .openapi({ description: 'The `PublicKeyCredential` as JSON (`id`, `rawId`, `type`, `response`, ...)' })

export const ChallengeField = z
  .string({ error: (iss) => (iss.input === undefined ? 'Challenge is required' : 'Challenge must be a string') })
  .min(1, 'Challenge is required')
  .max(130, 'Invalid or expired challenge')
  .openapi({ description: 'The `challenge` from the matching options response' })

export const OptionsSchema = (name: string, what: string) =>
  z
    .object({
      options: z.record(z.string(), z.unknown()).openapi({ description: `Serialized WebAuthn ${what} options (\`optionsJSON\` for @simplewebauthn/browser)` }),
      challenge: ChallengeSchema,
    })
    .openapi(name)

export const bodyError = 'Request body must be a JSON object'
export const WEBAUTHN_TIMEOUT_MS = 60_000

/** A passkey as its owner sees it: never the public key or the counter. */
export const PasskeyItemSchema = z
  .object({
    id: z.string().max(1400).openapi({ description: 'The credential id (base64url)' }),
    label: z.string().max(256).openapi({ example: 'Laptop' }),
    createdAt: z.string().max(64).openapi({ format: 'date-time' }),
    lastUsedAt: z.string().max(64).nullable().openapi({ format: 'date-time', description: 'Last sign-in with it; null if never used' }),
  })
  .openapi('Passkey')

export const PasskeyIdParams = z.object({
  id: z
    .string()
    .max(1400, 'Invalid passkey id')
    .regex(/^[A-Za-z0-9_-]+$/, 'Invalid passkey id')
    .openapi({ param: { name: 'id', in: 'path' }, description: 'The credential id from the list' }),
})
