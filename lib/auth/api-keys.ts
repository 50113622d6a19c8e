import { and, eq } from 'drizzle-orm'
import { apiKeys, users } from '../../schema'
import { sha256Hex, randomHex } from '../crypto'
import type { Reader } from '../db/rls'

export const API_KEY_PREFIX = 'sk_'
export const LOOKUP_PREFIX_LENGTH = 10

/** `sk_` + 256 random bits as hex; the first 10 characters are the lookup prefix. */
export const generateApiKey = () => `${API_KEY_PREFIX}${randomHex(32)}`
export const lookupPrefix = (key: string) => key.slice(0, LOOKUP_PREFIX_LENGTH)

const KEY_SHAPE = /^sk_[0-9a-f]{64}$/

/**
 * The one way any route checks a presented API key: by its prefix and SHA-256 (a digest of 256 random bits:
 * comparing it in the index leaks nothing a forger could use), touching `lastUsedAt` in the same batch, so a
 * key request is one database round trip on Neon. Runs as the service (the caller is not known yet). Returns
 * the key row and its owner.
 */
export async function findApiKey(reader: Reader, presented: string) {
  if (!KEY_SHAPE.test(presented)) return null
  const digest = await sha256Hex(presented)
  const matches = and(eq(apiKeys.prefix, lookupPrefix(presented)), eq(apiKeys.keySha256, digest))
  const [match] = await reader.asService('apiKeyLookup', (db) => [
    db.update(apiKeys).set({ lastUsedAt: new Date() }).where(matches),
    db.select({ key: apiKeys, user: users }).from(apiKeys).innerJoin(users, eq(users.id, apiKeys.userId)).where(matches).limit(1),
  ])
  return match ?? null
}
