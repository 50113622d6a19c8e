import { and, eq, gt, inArray } from 'drizzle-orm'
import type { Db } from '../../lib/db/rls'
import { asService } from '../../lib/db/rls'
import { muxEvents, radioSessions } from '../../schema/content'
import { CURRENT_STATUSES } from './sessions'

/** The fields of a Mux webhook event this service reads. */
export interface MuxEvent {
  id: string
  type: string
  object?: { type?: string; id?: string }
  data?: { id?: string }
}

export type WebhookOutcome = 'applied' | 'duplicate' | 'ignored' | 'unchanged'

/**
 * What each live-stream event does to the session streaming to that live stream (others are recorded, no effect):
 * - `video.live_stream.active`: the broadcast is playable, `active` → `live` (unexpired sessions only);
 * - `video.live_stream.idle`: the broadcast stopped (after Mux's reconnect window), `live` → `active`: the session
 *   keeps its slot until its DJ ends it or it expires;
 * - `video.live_stream.disabled` / `.deleted`: the stream can no longer take ingest, a current session → `auto-ended`
 *   (when this service ended the session itself, it is no longer current and nothing changes).
 * `video.live_stream.disconnected` changes nothing: Mux keeps the stream active through the reconnect window and
 * sends `idle` if the DJ does not come back.
 */
export const HANDLED_EVENTS = ['video.live_stream.active', 'video.live_stream.idle', 'video.live_stream.disabled', 'video.live_stream.deleted'] as const

/**
 * Applies `event` once: its id goes into `mux_events` in the same transaction as its effect, so a redelivery (even
 * concurrent) is `duplicate` and a failure midway leaves nothing recorded (Mux retries).
 */
export function processMuxEvent(db: Db, event: MuxEvent, now = new Date()): Promise<WebhookOutcome> {
  return asService(db, 'muxWebhook', async (tx) => {
    const recorded = await tx.insert(muxEvents).values({ id: event.id, type: event.type }).onConflictDoNothing().returning({ id: muxEvents.id })
    if (recorded.length === 0) return 'duplicate'
    if (!(HANDLED_EVENTS as readonly string[]).includes(event.type)) return 'ignored'
    const streamId = event.data?.id ?? (event.object?.type === 'live_stream' ? event.object.id : undefined)
    if (!streamId) return 'ignored'
    const ofStream = eq(radioSessions.streamId, streamId)
    const set = { updatedAt: now }
    const changed =
      event.type === 'video.live_stream.active'
        ? await tx.update(radioSessions).set({ ...set, status: 'live' }).where(and(ofStream, eq(radioSessions.status, 'active'), gt(radioSessions.expiresAt, now))).returning({ id: radioSessions.id })
        : event.type === 'video.live_stream.idle'
          ? await tx.update(radioSessions).set({ ...set, status: 'active' }).where(and(ofStream, eq(radioSessions.status, 'live'))).returning({ id: radioSessions.id })
          : await tx
              .update(radioSessions)
              .set({ ...set, status: 'auto-ended', endedAt: now })
              .where(and(ofStream, inArray(radioSessions.status, [...CURRENT_STATUSES])))
              .returning({ id: radioSessions.id })
    return changed.length > 0 ? 'applied' : 'unchanged'
  })
}
