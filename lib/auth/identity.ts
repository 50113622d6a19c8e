import type { Context } from 'hono'
import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../context'
import { hmacSha256Hex, timingSafeEqual } from '../crypto'
import { ApiError } from '../http/errors'
import { log } from '../log'

export type Identity = NonNullable<AppEnv['Variables']['identity']>

export const DEFAULT_USER_ID = 'anonymous'
export const DEFAULT_ROLE = 'user'

/** Header carrying the signing time (unix seconds); it is the last field of the signed string. */
export const IDENTITY_TIMESTAMP_HEADER = 'x-identity-timestamp'
/** A signature is good this long either side of the server clock: a leaked one dies within minutes. */
export const IDENTITY_TOLERANCE_SEC = 5 * 60

/** `HMAC_SECRET`, else `INTERNAL_API_KEY`, else none. */
export const identitySecret = (c: Context<AppEnv>) => c.var.services.config.HMAC_SECRET ?? c.var.services.config.INTERNAL_API_KEY

/** The spec's defaults: an absent (or empty) id is `anonymous`, role `user`; an absent email is empty. */
const canonical = (i: { userId?: string; email?: string; role?: string }) => ({
  userId: i.userId || DEFAULT_USER_ID,
  email: i.email ?? '',
  role: i.role || DEFAULT_ROLE,
})

/**
 * The signed message is `{userId}:{userEmail}:{userRole}:{timestamp}`. A colon in the email or role would
 * let a signed tuple be re-split into another (id `a`, email `b:c` vs id `a:b`, email `c`), so neither may
 * hold one; the id may (e.g. `admin:<email>`), since it is the leftmost field; the timestamp is digits only.
 */
const ambiguous = (i: { email: string; role: string }) => i.email.includes(':') || i.role.includes(':')
const signedString = (i: { userId: string; email: string; role: string }, timestamp: string) => `${i.userId}:${i.email}:${i.role}:${timestamp}`
const TIMESTAMP_RE = /^\d{1,12}$/

/** Lower-case hex HMAC-SHA256 of the identity at `timestamp` (unix seconds), as `x-user-signature` carries it. */
export async function signIdentity(secret: string, identity: { userId?: string; email?: string; role?: string }, timestamp: number) {
  const i = canonical(identity)
  if (ambiguous(i)) throw new Error('identity email and role must not contain ":"')
  return hmacSha256Hex(secret, signedString(i, String(Math.floor(timestamp))))
}

/** Every header a signer sends for `identity`, signed now (or at `nowMs`): what the web tier forwards. */
export async function signedIdentityHeaders(secret: string, identity: { userId?: string; email?: string; role?: string }, nowMs = Date.now()) {
  const timestamp = Math.floor(nowMs / 1000)
  const headers: Record<string, string> = {
    [IDENTITY_TIMESTAMP_HEADER]: String(timestamp),
    'x-user-signature': await signIdentity(secret, identity, timestamp),
  }
  if (identity.userId) headers['x-user-id'] = identity.userId
  if (identity.email !== undefined) headers['x-user-email'] = identity.email
  if (identity.role) headers['x-user-role'] = identity.role
  return headers
}

const invalid = (error = 'Invalid signature') => new ApiError('INVALID_SIGNATURE', error)

/**
 * Reads and checks the identity headers, sets and returns `c.var.identity`. With a secret the signature
 * and its timestamp are required (401 `SIGNATURE_REQUIRED` / `INVALID_SIGNATURE`; a timestamp more than
 * 5 minutes off is `Signature expired`). Without a secret the headers would be anyone's claim, so the
 * answer is 500 `Server misconfigured` (like the shared-key guard), unless `ALLOW_UNSIGNED_IDENTITY`
 * opts a local development setup into the spec's unsigned mode.
 */
export async function verifyIdentity(c: Context<AppEnv>): Promise<Identity> {
  const headers = { userId: c.req.header('x-user-id'), email: c.req.header('x-user-email'), role: c.req.header('x-user-role') }
  const i = canonical(headers)
  const secret = identitySecret(c)
  if (secret) {
    const signature = c.req.header('x-user-signature')
    if (!signature) throw new ApiError('SIGNATURE_REQUIRED')
    const timestamp = c.req.header(IDENTITY_TIMESTAMP_HEADER)
    if (!timestamp) throw new ApiError('SIGNATURE_REQUIRED', 'Signature timestamp required')
    if (!TIMESTAMP_RE.test(timestamp) || ambiguous(i)) throw invalid()
    // Only the decisions doc's lower-case hex is accepted, compared as strings in constant time.
    const expected = await hmacSha256Hex(secret, signedString(i, timestamp))
    if (!timingSafeEqual(signature, expected)) throw invalid()
    // Checked after the signature, so an unsigned request learns nothing about the server clock.
    if (Math.abs(Date.now() / 1000 - Number(timestamp)) > IDENTITY_TOLERANCE_SEC) throw invalid('Signature expired')
  } else if (!c.var.services.config.ALLOW_UNSIGNED_IDENTITY) {
    log.error('auth.identity_unsigned_refused', {
      requestId: c.var.requestId,
      hint: 'set HMAC_SECRET (or INTERNAL_API_KEY); ALLOW_UNSIGNED_IDENTITY=1 is for local development only',
    })
    throw new ApiError('MISCONFIGURED')
  }
  const identity: Identity = { userId: i.userId, email: headers.email || undefined, role: i.role }
  c.set('identity', identity)
  return identity
}

/** Spec "Authentication" 2 as middleware: sets `c.var.identity`. */
export const identityHeaders = createMiddleware<AppEnv>(async (c, next) => {
  await verifyIdentity(c)
  await next()
})

/** OpenAPI text for the identity-header scheme: one description wherever the scheme is documented. */
export const IDENTITY_SCHEME_DESCRIPTION =
  'Identity headers from the web tier: `x-user-id` (default `anonymous`), `x-user-email` (optional), ' +
  '`x-user-role` (default `user`), `x-identity-timestamp` (unix seconds) and `x-user-signature`, the ' +
  'lower-case hex HMAC-SHA256 of `{userId}:{userEmail}:{userRole}:{timestamp}` under `HMAC_SECRET` (fallback ' +
  '`INTERNAL_API_KEY`). The signature and timestamp are required: 401 `SIGNATURE_REQUIRED` when either is ' +
  'missing, 401 `INVALID_SIGNATURE` when wrong or more than 5 minutes from the server clock (`Signature ' +
  'expired`); a signature without a timestamp is not accepted. With no secret configured the headers are ' +
  'refused with 500 `Server misconfigured`, unless `ALLOW_UNSIGNED_IDENTITY` (local development only) takes them unsigned.'
