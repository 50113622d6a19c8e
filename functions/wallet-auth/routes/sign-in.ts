import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { createMiddleware } from 'hono/factory'
import { getAddress } from 'viem'
import { walletEmail } from '../../../lib/auth/accounts'
import { assertTrustedOrigin } from '../../../lib/auth/session'
import { signInWithIdentity } from '../../../lib/auth/sign-in'
import type { AppEnv } from '../../../lib/context'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { enforceRateLimit, limitedRoute } from '../../../lib/http/rate-limit'
import { jsonBody } from '../../../lib/http/validation'
import { verifyBase } from '../../../lib/auth/wallet-signature'
import { verifyTempo } from '../verify'

const WalletAuthBody = z
  .object({
    address: z.string({ error: 'Address required' }).max(1024).regex(/^0x[0-9a-fA-F]{40}$/, 'Invalid address'),
    message: z.string({ error: 'Message required' }).min(1, 'Message required').max(8192, 'Message too long'),
    // ERC-6492 wraps the owner's signature with factory calldata: far longer than 65 bytes.
    signature: z
      .string({ error: 'Signature required' })
      .max(16_384, 'Invalid signature')
      .regex(/^0x(?:[0-9a-fA-F]{2})+$/, 'Invalid signature'),
    chain: z.enum(['base', 'tempo'], { error: "Chain must be 'base' or 'tempo'" }).optional(),
  })
  .openapi('WalletAuthRequest')

const WalletAuthResponse = z
  .object({ ok: z.literal(true), user: z.object({ id: z.string().max(255), name: z.string().max(256) }) })
  .openapi('WalletAuthResponse')

// Cookie-setting POST: a browser on a foreign page is refused outright (clients without Origin pass).
const trustedOrigin = createMiddleware<AppEnv>(async (c, next) => {
  assertTrustedOrigin(c)
  await next()
})

export const route = createRoute(limitedRoute(limits.walletSignIn, {
  method: 'post',
  path: '/api/wallet-auth',
  operationId: 'signInWithWallet',
  security: [],
  tags: ['Wallet auth'],
  summary: 'Sign in with a wallet (Base SIWE or Tempo)',
  description: [
    'Get a nonce (`/api/auth/nonce`), sign a message containing it, post `{address, message, signature, chain?}`. ',
    'On success the user whose email is `<address lower-case>@wallet.<SERVICE_DOMAIN>` is signed in (created, with ',
    'the welcome email, on first use; verified, since the signature proves the address) and `service-session` is ',
    'set as for email login. An unverified password account holding that address (made before such sign-ups ',
    'were refused) is taken over: its password, sessions, API keys, passkeys and other links are removed.\n\n',
    "**`chain` absent or `'base'` (8453)**: an EIP-4361 (SIWE) message. `domain` must be the host of the first ",
    'APP_ORIGIN (with its port; a `scheme`, if given, must match), the origin of `URI` one of APP_ORIGIN, ',
    '`Chain ID` 8453, the address the posted one (any case), `Issued At` not more than 60 s ahead, ',
    '`Expiration Time` not passed, `Not Before` reached, and no wallet-proof statement (a message written as the proof ',
    'of `POST /api/radio/streams` or `POST /api/wallet/sessions` is 400 `MESSAGE_MALFORMED` here, as a sign-in message ',
    'is there). EOA, ERC-1271 (deployed) and ERC-6492 (counterfactual) ',
    'signatures are accepted; the latter two are checked on Base (`BASE_RPC_URL`).\n\n',
    "**`chain: 'tempo'` (4217)**: an EIP-191 `personal_sign` signature (EOA) of exactly these lines, `\\n`-separated, ",
    'no trailing newline, `Issued At` RFC 3339 UTC ending in `Z` (`Date#toISOString()`), at most 10 minutes old:\n\n',
    '```\n<domain> wants you to sign in with your wallet.\n\nAddress: <0x address>\nChain ID: 4217\n',
    'Nonce: <nonce>\nIssued At: <ISO 8601 UTC>\n```\n\n',
    'The nonce is spent by the first attempt that names it, whatever the outcome. Errors: 400 `VALIDATION` ',
    '(body fields) or `MESSAGE_MALFORMED` (message not in the format); 401 `NONCE_INVALID`, `DOMAIN_MISMATCH`, ',
    '`URI_MISMATCH`, `CHAIN_MISMATCH`, `ADDRESS_MISMATCH`, `MESSAGE_EXPIRED`, `MESSAGE_NOT_YET_VALID`, ',
    '`SIGNATURE_INVALID`; 403 `ORIGIN_NOT_ALLOWED` (foreign `Origin`); 429 after 10 attempts per minute per IP; ',
    '503 `CHAIN_UNAVAILABLE` when a smart-wallet signature cannot be checked on Base.',
  ].join(''),
  // The limiter runs after body validation (in the handler): a malformed body costs no store round trip.
  middleware: [trustedOrigin],
  request: { body: jsonBody(WalletAuthBody) },
  responses: {
    200: ok(WalletAuthResponse, 'Signed in; sets `service-session`'),
    400: errorResponse('`VALIDATION` or `MESSAGE_MALFORMED`'),
    401: errorResponse('Nonce, message or signature refused (see `code`)'),
    403: errorResponse('Foreign origin'),
    503: errorResponse('Store not configured or Base RPC unavailable'),
  },
}, 'handler'))

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const body = c.req.valid('json')
  await enforceRateLimit(c, limits.walletSignIn) // after validation, before the nonce is spent or the chain called
  const claim = { address: body.address as `0x${string}`, message: body.message, signature: body.signature as `0x${string}` }
  if (body.chain === 'tempo') await verifyTempo(c, claim)
  else await verifyBase(c, claim)

  // The signature proves the address, so the derived email is verified by construction.
  const subject = claim.address.toLowerCase()
  const email = walletEmail(c.var.services.config, subject)
  const { user } = await signInWithIdentity(c, { provider: 'wallet', subject, email, emailVerified: true, name: getAddress(claim.address) })
  return c.json({ ok: true as const, user: { id: user.id, name: user.name } }, 200)
}
