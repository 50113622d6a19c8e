import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { generateAuthenticationOptions } from '@simplewebauthn/server'
import { eq } from 'drizzle-orm'
import type { AppEnv } from '../../../lib/context'
import { noStore } from '../../../lib/http/no-store'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { limits } from '../../../lib/http/limits'
import { enforceRateLimit, limitedRoute } from '../../../lib/http/rate-limit'
import { jsonBody } from '../../../lib/http/validation'
import { asService } from '../../../lib/db/rls'
import { users } from '../../../schema'
import { issueChallenge } from '../challenge'
import { bodyError, OptionsSchema, WEBAUTHN_TIMEOUT_MS } from '../schemas'

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

export const route = createRoute(limitedRoute(limits.passkeySignIn, {
  method: 'post',
  path: '/api/passkey/auth/options',
  operationId: 'startPasskeySignIn',
  security: [],
  middleware: [noStore] as const,
  tags: ['Passkeys'],
  summary: 'Start signing in with a passkey',
  description:
    'Request options with an empty `allowCredentials` (the browser offers its discoverable passkeys for this ' +
    'site), user verification required, and a challenge bound to the account the email names. Credential ids ' +
    'are never listed, and an unknown email gets the same answer from the same work (one lookup by email) with a ' +
    'challenge that signs no one in, so the answer says nothing about the account or whether it exists. ' +
    `${limits.passkeySignIn.limit} requests per minute per IP, ` +
    'shared with `/api/passkey/auth/verify`.',
  request: { body: jsonBody(AuthOptionsBody) },
  responses: {
    200: ok(OptionsSchema('PasskeyAuthOptions', 'request'), 'Options and their challenge'),
    400: errorResponse('`Identifier is required` (`VALIDATION`); or invalid JSON'),
  },
}, 'handler'))

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { identifier } = c.req.valid('json')
  // After validation: a malformed request costs no store round trip (and a Worker without a store still answers 400).
  await enforceRateLimit(c, limits.passkeySignIn)
  const { db, config } = c.var.services
  // No session yet: the service finds the account, for the challenge's binding only. Its passkeys are not
  // read: listing them would tell anyone with the email which credentials it has, and cost a query the
  // unknown email skips.
  const [user] = await asService(db, 'signIn', (tx) =>
    tx.select({ id: users.id }).from(users).where(eq(users.email, identifier.toLowerCase())),
  )
  const { bytes, challenge } = await issueChallenge(c, user ? { purpose: 'auth', userId: user.id } : { purpose: 'auth' })
  const options = await generateAuthenticationOptions({
    rpID: config.webauthn.rpId,
    allowCredentials: [],
    challenge: bytes,
    timeout: WEBAUTHN_TIMEOUT_MS,
    userVerification: 'required',
  })
  return c.json({ options, challenge }, 200)
}
