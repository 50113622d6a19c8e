import { eq } from 'drizzle-orm'
import { generateApiKey, lookupPrefix } from '../../lib/auth/api-keys'
import { hashSecret } from '../../lib/auth/password'
import type { Config } from '../../lib/config'
import type { Services } from '../../lib/context'
import { sha256Hex } from '../../lib/crypto'
import type { Db } from '../../lib/db/rls'
import { apiKeys, users } from '../../schema'

/** A user API key stored as the keys family stores it (bcrypt at the test cost, SHA-256, prefix). */
export async function insertApiKey(db: Db, userId: string, name = 'test') {
  const key = generateApiKey()
  const [row] = await db
    .insert(apiKeys)
    .values({ userId, name, prefix: lookupPrefix(key), keyHash: await hashSecret(key, 4), keySha256: await sha256Hex(key) })
    .returning()
  return { key, id: row.id }
}

/** A user's stored plan; a plan's subscription is `active` unless `status` says otherwise, no plan is `inactive`. */
export const setPlan = (
  db: Db,
  userId: string,
  plan: string | null,
  subscriptionId: string | null = null,
  opts: { status?: string; trialEndsAt?: Date | null } = {},
) =>
  db
    .update(users)
    .set({ plan, subscriptionId, subscriptionStatus: opts.status ?? (plan ? 'active' : 'inactive'), trialEndsAt: opts.trialEndsAt ?? null })
    .where(eq(users.id, userId))

/** The harness's services with some config values replaced (node services are a plain object). */
export const withConfig = (services: Services, overrides: Partial<Config>): Services => ({
  ...services,
  config: { ...services.config, ...overrides },
})
