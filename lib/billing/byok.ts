import type { Config } from '../config'
import { log } from '../log'
import { open, SealedValueUnreadable } from '../secret-box'

/** What a sealed BYOK key is bound to (secret-box additional data): it opens only as its owner's. */
export const BYOK_PURPOSE = 'byok'

/**
 * The user's stored provider key in the clear, or null when there is none or it cannot be opened with this server's
 * keys (they changed or were lost): then BYOK reads as not set (`byokEnabled: false`) and the user enables it again
 * with their key; never a 500.
 */
export async function openByokKey(config: Config, userId: string, row: { keyId: string | null; sealed: string | null } | null | undefined) {
  if (!row?.keyId || !row.sealed) return null
  try {
    return await open(config, { keyId: row.keyId, sealed: row.sealed }, userId, BYOK_PURPOSE)
  } catch (e) {
    if (!(e instanceof SealedValueUnreadable)) throw e
    log.warn('byok.key_unreadable', { userId, keyId: e.keyId, why: e.why })
    return null
  }
}
