import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { type RegistrationResponseJSON, verifyRegistrationResponse } from '@simplewebauthn/server'
import { isoBase64URL } from '@simplewebauthn/server/helpers'
import { asUser } from '../../../lib/db/rls'
import { ApiError } from '../../../lib/http/errors'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { jsonBody } from '../../../lib/http/validation'
import { passkeys } from '../../../schema'
import { sendNotice } from '../../../lib/mail/notice'
import { assertSignedChallenge, consumeChallenge } from '../challenge'
import { FRESH_SESSION_MINUTES, requireFreshSession } from '../fresh-session'
import { passkeyAddedMail } from '../mail'
import { bodyError, ChallengeField, CredentialField } from '../schemas'

const RegisterBody = z
  .object(
    {
      credential: CredentialField,
      challenge: ChallengeField,
      label: z
        .string({ error: 'Label must be a string' })
        .trim()
        .max(64, 'Label must be at most 64 characters')
        .optional()
        .openapi({ description: 'A name to recognise it by; `Passkey` when absent or empty', example: 'Laptop' }),
    },
    { error: bodyError },
  )
  .openapi('PasskeyRegistration')

export const route = signedInRoute({
  method: 'post',
  path: '/api/passkey/register/verify',
  operationId: 'finishPasskeyRegistration',
  tags: ['Passkeys'],
  summary: 'Finish registering a passkey',
  description:
    'Verifies the new credential against the challenge from the options call (user verification required) ' +
    'and stores it for the signed-in user, then mails the account\'s address that a passkey was added (`passkey-added`). ' +
    'The challenge is used up by this call, whatever its outcome. Needs a recent sign-in: the session must be at most ' +
    `${FRESH_SESSION_MINUTES} minutes old, else 403 \`REAUTH_REQUIRED\` (checked before the challenge is used).`,
  middleware: [requireFreshSession],
  request: { body: jsonBody(RegisterBody) },
  responses: {
    200: ok(z.object({ ok: z.literal(true) }), 'Registered'),
    400: errorResponse(
      'Missing credential or challenge (`VALIDATION`); challenge unknown, expired, used or issued to someone else ' +
        '(`CHALLENGE_INVALID`); the credential signed another challenge (`CHALLENGE_MISMATCH`); verification failed ' +
        '(`PASSKEY_VERIFICATION_FAILED`); `Passkey already registered` (`PASSKEY_EXISTS`)',
    ),
    403: errorResponse('Foreign `Origin` (`ORIGIN_NOT_ALLOWED`); session older than 10 minutes (`REAUTH_REQUIRED`)'),
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const { credential, challenge, label } = c.req.valid('json')
  const me = c.var.user.id
  const { config } = c.var.services
  const { expected } = await consumeChallenge(c, challenge, (b) => b.purpose === 'register' && b.userId === me)
  assertSignedChallenge(credential, expected)
  const verification = await verifyRegistrationResponse({
    response: credential as unknown as RegistrationResponseJSON,
    expectedChallenge: expected,
    expectedOrigin: config.webauthn.origin,
    expectedRPID: config.webauthn.rpId,
    requireUserVerification: true,
  }).catch(() => ({ verified: false as const }))
  if (!verification.verified) throw new ApiError('PASSKEY_VERIFICATION_FAILED')
  const { credential: cred, credentialDeviceType, credentialBackedUp } = verification.registrationInfo
  // Ids are unique across all users; the conflict is seen even on a row RLS hides from this user.
  const inserted = await asUser(c, (tx) =>
    tx
      .insert(passkeys)
      .values({
        id: cred.id,
        userId: me,
        publicKey: isoBase64URL.fromBuffer(cred.publicKey),
        counter: cred.counter,
        transports: cred.transports ?? null,
        deviceType: credentialDeviceType,
        backedUp: credentialBackedUp,
        label: label || 'Passkey',
      })
      .onConflictDoNothing({ target: passkeys.id })
      .returning({ id: passkeys.id }),
  )
  if (inserted.length === 0) throw new ApiError('PASSKEY_EXISTS')
  // The owner hears of every new credential: a passkey added by someone else is seen, not silent.
  await sendNotice(c, passkeyAddedMail(c.var.user.email, label || 'Passkey', config.baseUrl))
  return c.json({ ok: true as const }, 200)
}
