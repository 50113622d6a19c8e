import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { generateAuthenticationOptions } from '@simplewebauthn/server'
import { eq } from 'drizzle-orm'
import type { AppEnv } from '../../../lib/context'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { jsonBody } from '../../../lib/http/validation'
import { passkeys, users } from '../../../schema'
import { issueChallenge } from '../challenge'
import { bodyError, limitSignIn, OptionsSchema, passkeySignInLimit, WEBAUTHN_TIMEOUT_MS } from '../schemas'

const AuthOptionsBody = z
  .object(
    {
      identifier: z
        .string({ error: (iss) => (iss.input === undefined ? 'Identifier is required' : 'Identifier must be a string') })
        .trim()
        .min(1, 'Identifier is required')
        .max(254, 'Identifier must be at most 254 characters')
        .openapi({ description: 'The account email (case-insensitive)', example: 'alice@example.com' }),
    },
    { error: bodyError },
  )
  .openapi('PasskeyAuthOptionsRequest')

export const route = createRoute({
  method: 'post',
  path: '/api/passkey/auth/options',
  tags: ['Passkeys'],
  summary: 'Start signing in with a passkey',
  description:
    "Request options listing the account's passkeys in `allowCredentials`, user verification required. " +
    'An unknown email gets the same shape with an empty list and a challenge that signs no one in, so the ' +
    `answer does not say whether the account exists. ${passkeySignInLimit.limit} requests per minute per IP, ` +
    'shared with `/api/passkey/auth/verify`.',
  request: { body: jsonBody(AuthOptionsBody) },
  responses: {
    200: ok(OptionsSchema('PasskeyAuthOptions', 'request'), 'Options and their challenge'),
    400: errorResponse('`Identifier is required` (`VALIDATION`); or invalid JSON'),
    429: errorResponse('Too many requests'),
  },
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { identifier } = c.req.valid('json')
  await limitSignIn(c)
  const { db, config } = c.var.services
  // No session yet: read as the service, like password login.
  const [user] = await db.select({ id: users.id }).from(users).where(eq(users.email, identifier.toLowerCase()))
  const creds = user
    ? await db.select({ id: passkeys.id, transports: passkeys.transports }).from(passkeys).where(eq(passkeys.userId, user.id))
    : []
  const { bytes, challenge } = await issueChallenge(c, user ? { purpose: 'auth', userId: user.id } : { purpose: 'auth' })
  const options = await generateAuthenticationOptions({
    rpID: config.webauthn.rpId,
    allowCredentials: creds.map((p) => ({ id: p.id, transports: p.transports ?? undefined })),
    challenge: bytes,
    timeout: WEBAUTHN_TIMEOUT_MS,
    userVerification: 'required',
  })
  c.header('Cache-Control', 'no-store')
  return c.json({ options, challenge }, 200)
}
