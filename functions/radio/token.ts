import { signToken, verifyToken } from '../../lib/auth/signed-token'

/**
 * A DJ access token: a signed token (lib/auth/signed-token.ts) under SESSION_SECRET naming one radio session (`sub`)
 * and its wallet, valid until the session's own expiry. Self-contained: nothing is stored, so it is shown once at
 * creation and proves the bearer created that session (it ends it: `DELETE /api/radio/streams/:id`).
 */
export interface DjToken {
  sessionId: string
  /** The wallet, lower case. */
  wallet: string
  /** Unix seconds. */
  exp: number
}

const WALLET = /^0x[0-9a-f]{40}$/

export const issueDjToken = (secret: string, token: DjToken) =>
  signToken(secret, 'radio-dj-access', { sub: token.sessionId, wallet: token.wallet }, { expiresAt: new Date(token.exp * 1000) })

/** The token's content when signed under `secret` as a DJ token, unexpired and well-formed; else null. */
export async function readDjToken(secret: string, token: string, now = Date.now()): Promise<DjToken | null> {
  const claims = await verifyToken(secret, 'radio-dj-access', token, { now })
  const { sub, wallet, exp } = claims ?? {}
  if (typeof sub !== 'string' || !sub || typeof wallet !== 'string' || !WALLET.test(wallet) || typeof exp !== 'number') return null
  return { sessionId: sub, wallet, exp }
}
