import type { Context } from 'hono'
import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../context'
import { hmacSha256Hex, timingSafeEqual } from '../crypto'
import { ApiError } from '../http/errors'

export type Identity = NonNullable<AppEnv['Variables']['identity']>

export const DEFAULT_USER_ID = 'anonymous'
export const DEFAULT_ROLE = 'user'

/** `HMAC_SECRET`, else `INTERNAL_API_KEY`, else none (then identity headers are taken unsigned). */
export const identitySecret = (c: Context<AppEnv>) => c.var.services.config.HMAC_SECRET ?? c.var.services.config.INTERNAL_API_KEY

/** The spec's defaults: an absent (or empty) id is `anonymous`, role `user`; an absent email is empty. */
const canonical = (i: { userId?: string; email?: string; role?: string }) => ({
  userId: i.userId || DEFAULT_USER_ID,
  email: i.email ?? '',
  role: i.role || DEFAULT_ROLE,
})

/**
 * The signed message is `{userId}:{userEmail}:{userRole}`. A colon in the email or role would let a
 * signed triple be re-split into another (id `a`, email `b:c` vs id `a:b`, email `c`), so neither may
 * hold one; the id may (e.g. `admin:<email>`), since it is the leftmost field.
 */
const ambiguous = (i: { email: string; role: string }) => i.email.includes(':') || i.role.includes(':')

/** Lower-case hex HMAC-SHA256 of the identity, as the web tier sends it in `x-user-signature`. */
export async function signIdentity(secret: string, identity: { userId?: string; email?: string; role?: string }) {
  const i = canonical(identity)
  if (ambiguous(i)) throw new Error('identity email and role must not contain ":"')
  return hmacSha256Hex(secret, `${i.userId}:${i.email}:${i.role}`)
}

/**
 * Reads and checks the identity headers, sets and returns `c.var.identity`. With a secret the
 * signature is required (401 `SIGNATURE_REQUIRED` / `INVALID_SIGNATURE`). With neither `HMAC_SECRET`
 * nor `INTERNAL_API_KEY` set the headers are accepted unsigned, as the spec says: any caller can then
 * claim any identity, so production must set a secret.
 */
export async function verifyIdentity(c: Context<AppEnv>): Promise<Identity> {
  const headers = { userId: c.req.header('x-user-id'), email: c.req.header('x-user-email'), role: c.req.header('x-user-role') }
  const i = canonical(headers)
  const secret = identitySecret(c)
  if (secret) {
    const signature = c.req.header('x-user-signature')
    if (!signature) throw new ApiError(401, 'Signature required', { code: 'SIGNATURE_REQUIRED' })
    // Only the decisions doc's lower-case hex is accepted, compared as strings in constant time.
    const expected = ambiguous(i) ? null : await hmacSha256Hex(secret, `${i.userId}:${i.email}:${i.role}`)
    if (!expected || !timingSafeEqual(signature, expected)) throw new ApiError(401, 'Invalid signature', { code: 'INVALID_SIGNATURE' })
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
