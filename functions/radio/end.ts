import type { Db } from '../../lib/db/rls'
import { asService } from '../../lib/db/rls'
import type { MuxClient } from './mux'
import { CURRENT_STATUSES, finishSession, lockSession, type RadioSession } from './sessions'

/**
 * How a session ends (spec "DJ session statuses"): `ended` by its DJ (replay assets deleted), `archived` by its DJ
 * (assets kept), `auto-ended` at the 2-hour maximum (assets kept).
 */
export type FinalStatus = 'ended' | 'archived' | 'auto-ended'

export type EndResult =
  | { outcome: 'ended'; session: RadioSession; assetsDeleted: number }
  | { outcome: 'already'; session: RadioSession }
  | { outcome: 'not_due'; session: RadioSession }
  | { outcome: 'not_found' }

/**
 * Stops the Mux side: the live stream is disabled (the broadcast ends, new ingest is refused); for `ended` its
 * recorded assets and then the stream itself are deleted. Each call is idempotent (an absent stream or asset is
 * done already), so a retry after a failure midway finishes the job. Throws MuxError; answers assets deleted.
 */
async function closeStream(mux: MuxClient, streamId: string, deleteRecordings: boolean) {
  await mux.disableLiveStream(streamId)
  if (!deleteRecordings) return 0
  const stream = await mux.getLiveStream(streamId)
  let deleted = 0
  if (stream) {
    const assets = new Set([...(stream.recent_asset_ids ?? []), ...(stream.active_asset_id ? [stream.active_asset_id] : [])])
    for (const asset of assets) if (await mux.deleteAsset(asset)) deleted++
  }
  await mux.deleteLiveStream(streamId)
  return deleted
}

/**
 * Ends a current session as `status`, under its row lock, Mux first: when Mux fails nothing is recorded and the
 * caller may retry; a concurrent end waits and then finds it ended. `authorize` runs on the locked row first (and
 * may throw); `dueBy` ends it only when it expired by then.
 */
export function endSession(
  db: Db,
  mux: MuxClient,
  sessionId: string,
  status: FinalStatus,
  opts: { authorize?: (session: RadioSession) => void; dueBy?: Date } = {},
): Promise<EndResult> {
  return asService(db, 'radioStreams', async (tx) => {
    const session = await lockSession(tx, sessionId)
    if (!session) return { outcome: 'not_found' as const }
    opts.authorize?.(session)
    if (!(CURRENT_STATUSES as readonly string[]).includes(session.status)) return { outcome: 'already' as const, session }
    if (opts.dueBy && session.expiresAt > opts.dueBy) return { outcome: 'not_due' as const, session }
    const assetsDeleted = session.streamId ? await closeStream(mux, session.streamId, status === 'ended') : 0
    const [done] = await finishSession(tx, sessionId, status, new Date())
    return { outcome: 'ended' as const, session: done, assetsDeleted }
  })
}
