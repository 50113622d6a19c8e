import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { farcasterEmail } from '../../../lib/auth/accounts'
import { assertTrustedOrigin } from '../../../lib/auth/session'
import { signInWithIdentity } from '../../../lib/auth/sign-in'
import type { AppEnv } from '../../../lib/context'
import { ApiError } from '../../../lib/http/errors'
import { unavailableDependency } from '../../../lib/http/dependency'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { jsonBody } from '../../../lib/http/validation'
import { ADDRESS_PROOF_TEMPLATE, assertAddressProof } from '../address-proof'
import { verifyFarcasterToken } from '../id-token'
import { AddressField, TokenGateResultSchema } from '../schemas'
import { issueSessionToken, sessionTokenSecret } from '../session-token'
import { checkHolding, gateSettings } from '../token-gate'
import { errorFields, log } from '../../../lib/log'

const required = 'Token required'
const VerifyBody = z
  .object({
    token: z.string({ error: required }).min(1, required).max(8192, 'Invalid Farcaster token'),
    address: AddressField.optional(),
    addressSignature: z
      .string()
      .max(2 + 2 * 4096) // `0x` and at most 4096 bytes, as the pattern says
      .regex(/^0x(?:[0-9a-fA-F]{2}){64,4096}$/, 'Invalid address signature')
      .optional()
      .openapi({ description: `\`address\`'s EIP-191 signature of: ${ADDRESS_PROOF_TEMPLATE}` }),
  })
  .openapi('FarcasterVerifyRequest')

// The gate's figures as `GET /api/token-gating` reports them, and whether this sign-in passed it.
const TokenGateSchema = TokenGateResultSchema.pick({ balance: true, balanceRaw: true, minBalance: true, contractAddress: true })
  .extend({ passed: z.boolean() })
  .openapi('FarcasterTokenGate')

export const route = createRoute({
  method: 'post',
  path: '/api/auth/farcaster/verify',
  operationId: 'signInWithFarcaster',
  security: [],
  tags: ['Farcaster'],
  summary: 'Sign in with a Farcaster Quick Auth ID token',
  description:
    'Verifies the ID token against the issuer key set (`iss` = FARCASTER_ISSUER, `aud` = FARCASTER_DOMAIN, ' +
    '`exp`, `iat`, `sub` = the FID); its JWS `alg` must be a public-key algorithm (EdDSA, ES*, RS*, PS*), ' +
    'checked before the issuer\'s keys are fetched, so `none` or HS256 is 401 `INVALID_TOKEN`. With `address` ' +
    'and TOKEN_GATE_CONTRACT set, the address must first be proven to be the signer\'s: `addressSignature` is ' +
    'its EIP-191 (`personal_sign`) signature of the text in that field\'s description (naming the FID and the ' +
    'SHA-256 of this `token`; EOA, ERC-1271 and ERC-6492 signatures on chain 8453), else 403 ' +
    '`ADDRESS_NOT_PROVEN` `Address ownership not proven`. Then it must hold at least TOKEN_GATE_MIN_BALANCE ' +
    '(token units) on chain 8453, else 403 `TOKEN_GATE`. Without a gate the address is ignored (and without ' +
    'an address no gate is checked). The account is the user with email `<fid>@farcaster.<service_domain>` (linked, or ' +
    'created with the welcome email once), named from the token\'s `name`/`username` claim, else `fid:<fid>`. ' +
    'Sets the `service-session` cookie and returns a 7-day `sessionToken` ' +
    '(`{base64url(JSON {fid, userId, iat, exp})}.{base64url(HMAC-SHA256)}` under FARCASTER_SESSION_SECRET, ' +
    'else NEXTAUTH_SECRET); `expiresAt` is that token\'s expiry.',
  request: { body: jsonBody(VerifyBody) },
  responses: {
    200: ok(
      z
        .object({
          ok: z.literal(true),
          user: z.object({ id: z.string().max(255), name: z.string().max(256) }),
          fid: z.number().int().min(0).max(2 ** 53 - 1).openapi({ format: 'int64' }),
          sessionToken: z.string().max(8192),
          expiresAt: z.string().max(64),
          tokenGate: TokenGateSchema.optional(),
        })
        .openapi('FarcasterVerifyResponse'),
    ),
    400: errorResponse('Token missing, or a malformed address'),
    401: errorResponse('Invalid Farcaster token (`INVALID_TOKEN`)'),
    403: errorResponse('Address ownership not proven (`ADDRESS_NOT_PROVEN`), token holding required (`TOKEN_GATE`), or a foreign Origin'),
    500: errorResponse('Farcaster session secret not configured (production), or sign-in failed'),
    502: errorResponse('Farcaster issuer or chain unavailable'),
    503: errorResponse('Token gating not configured (a malformed gate setting), or the database'),
  },
})

/** A display name from the token when the issuer sends one; Quick Auth tokens usually carry none. */
function nameFrom(claims: Record<string, unknown>, fid: number) {
  for (const key of ['name', 'username', 'display_name']) {
    const v = claims[key]
    if (typeof v === 'string' && v.trim()) return v.trim().slice(0, 100)
  }
  return `fid:${fid}`
}

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  assertTrustedOrigin(c) // it signs the browser in: no foreign page may post here
  const { token, address, addressSignature } = c.req.valid('json')
  const { config } = c.var.services
  const secret = sessionTokenSecret(config) // before anything is created
  const { fid, claims } = await verifyFarcasterToken(config, token, c.var.requestId)

  const gate = address ? gateSettings(config) : null // a malformed gate: 503, never an open door
  let tokenGate: z.infer<typeof TokenGateSchema> | undefined
  if (address && gate) {
    // Only an address the signer proved to hold may open the gate: anyone can name a whale's address.
    await assertAddressProof(config, { address, fid, token, signature: addressSignature as `0x${string}` | undefined }, c.var.requestId)
    const r = await checkHolding(gate, address, c.var.requestId)
    tokenGate = { passed: r.hasAccess, balance: r.balance, balanceRaw: r.balanceRaw, minBalance: r.minBalance, contractAddress: r.contractAddress }
    if (!r.hasAccess) throw new ApiError('TOKEN_GATE', { extra: { tokenGate } })
  }

  try {
    const email = farcasterEmail(config, fid) // proven by the ID token: verified by construction
    const { user } = await signInWithIdentity(c, { provider: 'farcaster', subject: String(fid), email, emailVerified: true, name: nameFrom(claims, fid) })
    const issued = await issueSessionToken(secret, { fid, userId: user.id })
    return c.json(
      { ok: true as const, user: { id: user.id, name: user.name }, fid, sessionToken: issued.sessionToken, expiresAt: issued.expiresAt, ...(tokenGate ? { tokenGate } : {}) },
      200,
    )
  } catch (e) {
    if (e instanceof ApiError || unavailableDependency(e)) throw e
    log.error('farcaster.sign_in_failed', { requestId: c.var.requestId, ...errorFields(e) })
    throw new ApiError('INTERNAL', 'Farcaster sign-in failed')
  }
}
