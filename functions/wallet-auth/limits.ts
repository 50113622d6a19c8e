import type { NamedLimit } from '../../lib/http/limits'

/** Per client IP. A nonce costs one kv write; a sign-in may cost an RPC call and a user row. */
export const walletLimits = {
  nonce: { name: 'wallet-nonce', limit: 30, windowSec: 60, message: 'Too many requests' },
  signIn: { name: 'wallet-auth', limit: 10, windowSec: 60, message: 'Too many sign-in attempts. Try again later.' },
} satisfies Record<string, NamedLimit>
