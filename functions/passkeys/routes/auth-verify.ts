import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { type AuthenticationResponseJSON, verifyAuthenticationResponse } from '@simplewebauthn/server'
import { isoBase64URL } from '@simplewebauthn/server/helpers'
import { and, eq, lt } from 'drizzle-orm'
import { assertTrustedOrigin, startSession } from '../../../lib/auth/session'
import type { AppEnv } from '../../../lib/context'
import { asService } from '../../../lib/db/rls'
import { ApiError } from '../../../lib/http/errors'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { limits } from '../../../lib/http/limits'
import { enforceRateLimit, limitedRoute } from '../../../lib/http/rate-limit'
import { jsonBody } from '../../../lib/http/validation'
import { passkeys, users } from '../../../schema'
import { assertSignedChallenge, consumeChallenge } from '../challenge'
import { bodyError, ChallengeField, CredentialField } from '../schemas'

const AuthVerifyBody = z.object({ credential: CredentialField, challenge: ChallengeField }, { error: bodyError }).openapi('PasskeyAuthentication')

// One answer for every way the credential itself fails: it reveals nothing about which part was wrong.
const failed = () => new ApiError('PASSKEY_AUTH_FAILED')

export const route = createRoute(limitedRoute(limits.passkeySignIn, {
  method: 'post',
  path: '/api/passkey/auth/verify',
  operationId: 'finishPasskeySignIn',
  security: [],
  tags: ['Passkeys'],
  summary: 'Finish signing in with a passkey',
  description:
    'Verifies the assertion (user verification required; the signature counter must increase unless both it ' +
    'and the stored one are 0), stores the new counter, and sets `service-session` exactly as password login ' +
    `does. The challenge is used up by this call, whatever its outcome. ${limits.passkeySignIn.limit} requests ` +
    'per minute per IP, shared with `/api/passkey/auth/options`.',
  request: { body: jsonBody(AuthVerifyBody) },
  responses: {
    200: ok(z.object({ ok: z.literal(true), user: z.object({ id: z.string().max(1400), name: z.string().max(256) }) }).openapi('PasskeyAuthResult')),
    400: errorResponse(
      'Missing credential or challenge (`VALIDATION`); challenge unknown, expired or used (`CHALLENGE_INVALID`); ' +
        'the credential signed another challenge (`CHALLENGE_MISMATCH`)',
    ),
    401: errorResponse(
      '`Passkey sign-in failed` (`PASSKEY_AUTH_FAILED`): unknown credential, not a passkey of the account the ' +
        'options were for, bad signature, user not verified, or a counter that did not increase',
    ),
    403: errorResponse('Foreign `Origin` (`ORIGIN_NOT_ALLOWED`)'),
  },
}, 'handler'))

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { credential, challenge } = c.req.valid('json')
  // After validation: a malformed request costs no store round trip (and a Worker without a store still answers 400).
  await enforceRateLimit(c, limits.passkeySignIn)
  // A foreign page must not sign the browser into the attacker's account (login CSRF).
  assertTrustedOrigin(c)
  const { db, config } = c.var.services
  const { binding, expected } = await consumeChallenge(c, challenge, (b) => b.purpose === 'auth')
  assertSignedChallenge(credential, expected)
  const [passkey] = await asService(db, 'signIn', (tx) => tx.select().from(passkeys).where(eq(passkeys.id, credential.id)))
  // Options issued for one account sign in only that account; those for an unknown email sign in no one.
  if (!passkey || !binding.userId || passkey.userId !== binding.userId) throw failed()
  const result = await verifyAuthenticationResponse({
    response: credential as unknown as AuthenticationResponseJSON,
    expectedChallenge: expected,
    expectedOrigin: config.webauthn.origin,
    expectedRPID: config.webauthn.rpId,
    credential: {
      id: passkey.id,
      publicKey: isoBase64URL.toBuffer(passkey.publicKey),
      counter: passkey.counter,
      transports: passkey.transports ?? undefined,
    },
    requireUserVerification: true,
  }).catch(() => null)
  if (!result?.verified) throw failed()
  const { newCounter, credentialBackedUp } = result.authenticationInfo
  // Checked again in the write: of two concurrent sign-ins carrying the same counter, only one passes.
  const user = await asService(db, 'signIn', async (tx) => {
    const [stored] = await tx
      .update(passkeys)
      .set({ counter: newCounter, backedUp: credentialBackedUp, lastUsedAt: new Date() })
      .where(and(eq(passkeys.id, passkey.id), newCounter === 0 ? eq(passkeys.counter, 0) : lt(passkeys.counter, newCounter)))
      .returning({ userId: passkeys.userId })
    if (!stored) return undefined
    const [row] = await tx.select({ id: users.id, name: users.name }).from(users).where(eq(users.id, stored.userId))
    return row
  })
  if (!user) throw failed()
  await startSession(c, user.id)
  return c.json({ ok: true as const, user }, 200)
}
