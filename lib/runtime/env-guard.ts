import { log } from '../log'

/**
 * A runtime's environment never carries a platform secret (issue #12, "env vars that never include a platform
 * secret"). These are the platform's own credentials (README "Configuration"): the shared key, database and
 * store URLs and tokens, Stripe, session/HMAC/OAuth secrets, encryption keys, mail and object-storage keys, the
 * runtime provider's own token. Matching is on the upper-cased name, so `stripe_secret_key` is refused too.
 * What a runtime legitimately needs (its own GATEWAY_TOKEN, a channel's bot token) is not matched.
 */
const EXACT = new Set([
  'INTERNAL_API_KEY',
  'ENCRYPTION_KEYS',
  'RUNTIME_PROVIDER_TOKEN',
  'RESEND_API_KEY',
  'S3_ACCESS_KEY_ID',
  'TEST_REDIS_URL',
])
const PATTERNS: RegExp[] = [
  /DATABASE_URL/, // DATABASE_URL, TEST_DATABASE_URL, ...
  /^STRIPE_/,
  /_SECRET/, // *_SECRET*: SESSION_SECRET, HMAC_SECRET, NEXTAUTH_SECRET, GOOGLE_CLIENT_SECRET, S3_SECRET_ACCESS_KEY, ...
  /^SECRET/,
  /^UPSTASH_/,
  /^QSTASH_/,
  /^RAILWAY_/, // Railway reserves RAILWAY_* and the platform's Railway token must never reach a runtime
]

/** The names in `env` that are platform secrets (empty when none). */
export function platformSecretKeys(env: Record<string, string>): string[] {
  return Object.keys(env).filter((key) => {
    const name = key.toUpperCase()
    return EXACT.has(name) || PATTERNS.some((p) => p.test(name))
  })
}

/** A caller bug, not a provider failure: thrown before any provider call is made. */
export class PlatformSecretError extends Error {
  constructor(readonly keys: string[]) {
    super(`Refusing to give a runtime platform secrets: ${keys.join(', ')}`)
    this.name = 'PlatformSecretError'
  }
}

/** Throws (and logs the names, never the values) when `env` holds a platform secret. */
export function assertNoPlatformSecrets(env: Record<string, string>): void {
  const keys = platformSecretKeys(env)
  if (keys.length === 0) return
  log.error('runtime.env_platform_secret_refused', { keys })
  throw new PlatformSecretError(keys)
}
