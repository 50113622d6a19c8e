import type { Db } from '../../lib/db/rls'
import type { Kv } from '../../lib/kv/types'
import { countDownload } from './queries'

const DAY_MS = 86_400_000

/**
 * Counts a download toward a skill's public `downloads` (which ranks the catalog) at most once per user per skill
 * per UTC day: the first download of the day writes `skills:downloaded:<skill>:<user>:<day>` (SET NX, atomic on
 * both kv adapters, expiring at the end of the UTC day), and only that one adds to the count. Downloads are
 * signed-in only, so every one has a user. True when this download was counted. Should the count then fail, the
 * day's mark is removed so a later download can count; the caller logs the failure (best effort).
 */
export async function countDailyDownload(stores: { db: Db; kv: Kv }, skillId: string, userId: string, now = Date.now()): Promise<boolean> {
  const day = new Date(now).toISOString().slice(0, 10)
  const key = `skills:downloaded:${skillId}:${userId}:${day}`
  const first = await stores.kv.set(key, 1, { nx: true, ttlMs: DAY_MS - (now % DAY_MS) })
  if (!first) return false
  try {
    await countDownload(stores.db, skillId)
  } catch (e) {
    await stores.kv.del(key).catch(() => {})
    throw e
  }
  return true
}
