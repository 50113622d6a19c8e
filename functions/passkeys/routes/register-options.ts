import type { RouteHandler } from '@hono/zod-openapi'
import { generateRegistrationOptions } from '@simplewebauthn/server'
import { eq } from 'drizzle-orm'
import { asUser } from '../../../lib/db/rls'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { passkeys } from '../../../schema'
import { issueChallenge } from '../challenge'
import { FRESH_SESSION_MINUTES, requireFreshSession } from '../fresh-session'
import { OptionsSchema, WEBAUTHN_TIMEOUT_MS } from '../schemas'

export const route = signedInRoute({
  method: 'post',
  path: '/api/passkey/register/options',
  operationId: 'startPasskeyRegistration',
  tags: ['Passkeys'],
  summary: 'Start registering a passkey',
  description:
    'Creation options for the signed-in user: attestation `none`, user verification required, 60 s timeout, ' +
    'the relying party from `WEBAUTHN_RP_ID`/`WEBAUTHN_ORIGIN` (else the first `APP_ORIGIN`), and the ' +
    "user's passkeys as `excludeCredentials`, and a discoverable (resident) key required, since sign-in lists no " +
    'credential ids. The challenge is bound to this user. Adding a passkey needs a recent sign-in: the session ' +
    `must be at most ${FRESH_SESSION_MINUTES} minutes old, else 403 \`REAUTH_REQUIRED\` (sign in again).`,
  middleware: [requireFreshSession],
  responses: {
    200: ok(OptionsSchema('PasskeyRegistrationOptions', 'creation'), 'Options and their challenge'),
    403: errorResponse('Foreign `Origin` (`ORIGIN_NOT_ALLOWED`); session older than 10 minutes (`REAUTH_REQUIRED`)'),
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const me = c.var.user
  const { config } = c.var.services
  const existing = await asUser(c, (tx) =>
    tx.select({ id: passkeys.id, transports: passkeys.transports }).from(passkeys).where(eq(passkeys.userId, me.id)),
  )
  const { bytes, challenge } = await issueChallenge(c, { purpose: 'register', userId: me.id })
  const options = await generateRegistrationOptions({
    rpName: config.WEBAUTHN_RP_NAME,
    rpID: config.webauthn.rpId,
    userName: me.email,
    userDisplayName: me.name,
    // Stable per account: an authenticator replaces its earlier passkey for this user instead of adding one.
    userID: new TextEncoder().encode(me.id),
    challenge: bytes,
    timeout: WEBAUTHN_TIMEOUT_MS,
    attestationType: 'none',
    excludeCredentials: existing.map((p) => ({ id: p.id, transports: p.transports ?? undefined })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
  })
  return c.json({ options, challenge }, 200)
}
