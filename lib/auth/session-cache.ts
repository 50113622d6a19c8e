import type { Services, SessionUser } from '../context'
import { errorFields, log } from '../log'

export type CachedUser = SessionUser & { expiresAt: Date }

/**
 * How stale a cached session may be when the revocation stamp cannot be written (kv down): the only case in
 * which a revoked session outlives its revocation, and then by at most this.
 */
export const SESSION_CACHE_TTL_MS = 60_000
/** Stamps are dated this far ahead so a reader's clock a little behind the revoker's cannot slip under one. */
export const STAMP_MARGIN_MS = 5_000
const MAX_ENTRIES = 10_000

interface Entry {
  user: CachedUser
  /** When the database lookup behind this entry started: a stamp at or after it makes the entry stale. */
  validatedAt: number
  storedAt: number
}

/**
 * Sessions this isolate (or Node process) has looked up, so a signed-in request skips the session query and
 * the token's hash (SHA-256 through Web Crypto is most of a cached read's cost on Node). Keyed by the token:
 * it lives only in this isolate's memory, as it does while a request is served; the database keeps hashes. Every use is checked against the user's revocation stamp in the kv store, which sign-out,
 * password change and reset, and account changes write after their database change commits: the very next
 * request anywhere sees it. See README "Session cache".
 */
export class SessionCache {
  private readonly entries = new Map<string, Entry>()

  constructor(private readonly now: () => number = Date.now) {}

  fresh(token: string): Entry | undefined {
    const entry = this.entries.get(token)
    if (!entry) return undefined
    const now = this.now()
    if (now - entry.storedAt > SESSION_CACHE_TTL_MS || entry.user.expiresAt.getTime() <= now) {
      this.entries.delete(token)
      return undefined
    }
    return entry
  }

  store(token: string, user: CachedUser, validatedAt: number) {
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!) // oldest first
    this.entries.set(token, { user, validatedAt, storedAt: this.now() })
  }

  forget(token: string) {
    this.entries.delete(token)
  }

  forgetUser(userId: string) {
    for (const [hash, entry] of this.entries) if (entry.user.id === userId) this.entries.delete(hash)
  }
}

const stampKey = (userId: string) => `session-stamp:${userId}`
// Outlives every session it could concern (sessions last 30 days).
const STAMP_TTL_MS = 31 * 24 * 60 * 60 * 1000

/** Whether a signed-in request can use the kv store (families without one skip the cache). */
const hasKv = (services: Services) => services.adapters.kv !== 'none'

/**
 * The user's revocation stamp: null when there is none, undefined when the kv store cannot say (the cache is
 * then not trusted and the session is read from the database).
 */
export async function readStamp(services: Services, userId: string): Promise<number | null | undefined> {
  if (!hasKv(services)) return undefined
  try {
    const stamp = await services.kv.get<number>(stampKey(userId))
    return typeof stamp === 'number' ? stamp : null
  } catch (e) {
    log.warn('session.stamp_unreadable', errorFields(e))
    return undefined
  }
}

/**
 * Makes every cached copy of `userIds`' sessions stale, everywhere, from the next request on. Call it after
 * the change (sessions deleted, password or profile updated) has committed.
 */
export async function expireCachedSessions(services: Services, ...userIds: string[]) {
  for (const userId of userIds) {
    services.sessionCache.forgetUser(userId)
    if (!hasKv(services)) continue
    try {
      await services.kv.set(stampKey(userId), Date.now() + STAMP_MARGIN_MS, { ttlMs: STAMP_TTL_MS })
    } catch (e) {
      // The database change stands; other isolates' copies live at most SESSION_CACHE_TTL_MS more.
      log.error('session.stamp_unwritable', { userId, ...errorFields(e) })
    }
  }
}
