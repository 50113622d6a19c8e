import { eq } from 'drizzle-orm'
import { apiKeys, users } from '../../schema'
import { sha256Hex, randomHex, timingSafeEqual } from '../crypto'
import type { Db } from '../db/client'
import { asService } from '../db/rls'

export const API_KEY_PREFIX = 'sk_'
export const LOOKUP_PREFIX_LENGTH = 10
export const MAX_KEYS_PER_USER = 10

/** `sk_` + 256 random bits as hex; the first 10 characters are the lookup prefix. */
export const generateApiKey = () => `${API_KEY_PREFIX}${randomHex(32)}`
export const lookupPrefix = (key: string) => key.slice(0, LOOKUP_PREFIX_LENGTH)

const KEY_SHAPE = /^sk_[0-9a-f]{64}$/

/**
 * The one way any route checks a presented API key: look up by prefix, then compare SHA-256 in
 * constant time. Runs as the service (the caller is not known yet). Returns the key row and its owner.
 */
export async function findApiKey(db: Db, presented: string) {
  if (!KEY_SHAPE.test(presented)) return null
  const digest = await sha256Hex(presented)
  return asService(db, 'apiKeyLookup', async (tx) => {
    const candidates = await tx
      .select({ key: apiKeys, user: users })
      .from(apiKeys)
      .innerJoin(users, eq(users.id, apiKeys.userId))
      .where(eq(apiKeys.prefix, lookupPrefix(presented)))
    const match = candidates.find((c) => timingSafeEqual(c.key.keySha256, digest))
    if (!match) return null
    await tx.update(apiKeys).set({ lastUsedAt: new Date() }).where(eq(apiKeys.id, match.key.id))
    return match
  })
}
