import type { Db } from '../../lib/db/rls'
import { errorFields, log } from '../../lib/log'
import { endSession } from './end'
import type { MuxClient } from './mux'
import { dueSessions } from './sessions'

/** The queue receiver that ends sessions at their 2-hour maximum (published with that delay at creation). */
export const RADIO_EXPIRE_PATH = '/api/radio/expire'
/** The sweep for expiries a lost or failed delivery missed (`{}` to the same receiver). */
export const RADIO_SWEEP_CRON = '*/10 * * * *'
/** A delivery this close before the expiry (queue clocks) already counts as due. */
const EARLY_MS = 60_000
const SWEEP_PAGE = 50

/**
 * Ends `sessionId` as `auto-ended` when it is due (disabling its Mux stream, recordings kept), or, without one,
 * every due session up to a page (the next sweep takes the rest). A session ended meanwhile is left as it is.
 * Mux failing on the one named session throws (the queue retries); in a sweep it is counted and left for later.
 */
export async function expireSessions(db: Db, mux: MuxClient, sessionId: string | undefined, requestId?: string) {
  const dueBy = new Date(Date.now() + EARLY_MS)
  if (sessionId) {
    const result = await endSession(db, mux, sessionId, 'auto-ended', { dueBy })
    if (result.outcome === 'ended') log.info('radio.session_expired', { requestId, sessionId })
    return { ended: result.outcome === 'ended' ? 1 : 0, failed: 0 }
  }
  let ended = 0
  let failed = 0
  for (const { id } of await dueSessions(db, new Date(), SWEEP_PAGE)) {
    try {
      if ((await endSession(db, mux, id, 'auto-ended', { dueBy })).outcome === 'ended') ended++
    } catch (e) {
      failed++
      log.warn('radio.session_not_expired', { requestId, sessionId: id, ...errorFields(e) })
    }
  }
  if (ended || failed) log.info('radio.sweep', { requestId, ended, failed })
  return { ended, failed }
}
