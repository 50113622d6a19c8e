import { and, asc, eq, gt, inArray, isNotNull } from 'drizzle-orm'
import { getAddress } from 'viem'
import type { Services } from '../../lib/context'
import { ApiError, peerUnavailable } from '../../lib/http/errors'
import { errorFields, log } from '../../lib/log'
import { radioSessions } from '../../schema/content'
import { embedUrl, hlsUrl, muxClient, playbackIdOf, type MuxLiveStream } from './mux'

/** A live stream entry (spec "Live stream entry (DJ)"). `streamKey` is always null: the key is a credential. */
export interface LiveDj {
  id: string
  name: string
  wallet: string | null
  playbackId: string
  streamKey: null
  status: 'active'
  startedAt: string | number
  source: 'mux' | 'session-cache'
  hlsUrl: string
  embedUrl: string
}

export type Availability = 'live' | 'idle' | 'degraded'
type FirstPartyStatus = 'pending' | 'healthy' | 'degraded' | 'failed' | 'stopped'

export interface LiveView {
  djs: LiveDj[]
  count: number
  primaryDj: LiveDj | null
  availability: Availability
  error?: string
  distribution: {
    origin: { status: 'active' | 'idle' | 'degraded'; playbackId: string | null; hlsUrl: string | null }
    firstParty: { status: FirstPartyStatus; pageUrl: string; note: string }
    relays: never[]
    requiredRelayStatus: 'none'
    overallStatus: FirstPartyStatus
  }
}

export const ANONYMOUS_DJ = 'Anonymous DJ'
/** The view is kept this long in kv: listeners poll it, and Mux rate-limits reads (about 5 a second). */
export const LIVE_CACHE_MS = 10_000
export const LIVE_CACHE_KEY = 'radio:live'
const SESSION_LIMIT = 100

const checksummed = (wallet: string) => {
  try {
    return getAddress(wallet)
  } catch {
    return wallet
  }
}
const startedMs = (dj: LiveDj) => (typeof dj.startedAt === 'number' ? dj.startedAt * 1000 : Date.parse(dj.startedAt))

type Enrichment = Pick<typeof radioSessions.$inferSelect, 'streamId' | 'name' | 'wallet' | 'startedAt'>

/** Mux's active streams, each enriched from its session record when there is one (name, wallet, start). */
function fromMux(streams: MuxLiveStream[], sessions: Enrichment[]): LiveDj[] {
  const byStream = new Map(sessions.map((s) => [s.streamId, s]))
  return streams.flatMap((stream) => {
    const playbackId = playbackIdOf(stream)
    if (!playbackId) return []
    const session = byStream.get(stream.id)
    const created = Number(stream.created_at)
    return [
      {
        id: stream.id,
        name: session?.name || ANONYMOUS_DJ,
        wallet: session ? checksummed(session.wallet) : null,
        playbackId,
        streamKey: null,
        status: 'active' as const,
        startedAt: session ? session.startedAt.toISOString() : Number.isFinite(created) ? created : Math.floor(Date.now() / 1000),
        source: 'mux' as const,
        hlsUrl: hlsUrl(playbackId),
        embedUrl: embedUrl(playbackId),
      },
    ]
  })
}

/** Sessions the last webhooks said were broadcasting (`live`) and not expired: the view when Mux is out of reach. */
function fromSessions(sessions: Array<Enrichment & { playbackId: string | null }>): LiveDj[] {
  return sessions.flatMap((s) =>
    s.streamId && s.playbackId
      ? [
          {
            id: s.streamId,
            name: s.name || ANONYMOUS_DJ,
            wallet: checksummed(s.wallet),
            playbackId: s.playbackId,
            streamKey: null,
            status: 'active' as const,
            startedAt: s.startedAt.toISOString(),
            source: 'session-cache' as const,
            hlsUrl: hlsUrl(s.playbackId),
            embedUrl: embedUrl(s.playbackId),
          },
        ]
      : [],
  )
}

function view(djs: LiveDj[], pageUrl: string, error?: string): LiveView {
  const sorted = [...djs].sort((a, b) => startedMs(a) - startedMs(b))
  const primary = sorted[0] ?? null
  const availability: Availability = error ? 'degraded' : primary ? 'live' : 'idle'
  const firstParty: FirstPartyStatus = availability === 'degraded' ? 'degraded' : availability === 'live' ? 'healthy' : 'stopped'
  const note =
    availability === 'degraded'
      ? 'The streaming provider is unreachable: DJs are listed from the last known sessions'
      : availability === 'live'
        ? 'Playing the primary DJ from the origin'
        : 'No DJ is on air'
  return {
    djs: sorted,
    count: sorted.length,
    primaryDj: primary,
    availability,
    ...(error ? { error } : {}),
    distribution: {
      origin: {
        status: availability === 'live' ? 'active' : availability,
        playbackId: primary?.playbackId ?? null,
        hlsUrl: primary?.hlsUrl ?? null,
      },
      firstParty: { status: firstParty, pageUrl, note },
      relays: [],
      requiredRelayStatus: 'none',
      overallStatus: firstParty,
    },
  }
}

/**
 * The public radio view: Mux's active live streams enriched from their sessions; when Mux cannot be reached (not
 * configured, down, slow past `MUX_TIMEOUT_MS`) the `live` sessions from the database, `degraded` with an `error`.
 * 503 only when the database fails too. Kept in kv for `LIVE_CACHE_MS` (a kv failure only skips the cache).
 */
export async function liveView(services: Services, requestId?: string): Promise<LiveView> {
  const { kv, reader, config } = services
  const cached = await kv.get<LiveView>(LIVE_CACHE_KEY).catch(() => null)
  if (cached) return cached
  const pageUrl = `${config.baseUrl}/radio`
  let result: LiveView
  try {
    const streams = await muxClient(config).listActiveLiveStreams()
    const ids = streams.map((s) => s.id)
    const sessions = ids.length
      ? await reader
          .asService('radioStreams', (db) =>
            db
              .select({ streamId: radioSessions.streamId, name: radioSessions.name, wallet: radioSessions.wallet, startedAt: radioSessions.startedAt })
              .from(radioSessions)
              .where(inArray(radioSessions.streamId, ids)),
          )
          .catch((e: unknown) => {
            // Mux answered: the entries stand without their names and wallets.
            log.warn('radio.live_enrichment_failed', { requestId, ...errorFields(e) })
            return []
          })
      : []
    result = view(fromMux(streams, sessions), pageUrl)
  } catch (e) {
    log.warn('radio.live_mux_unavailable', { dependency: 'mux', requestId, ...errorFields(e) })
    const now = new Date()
    const sessions = await reader
      .asService('radioStreams', (db) =>
        db
          .select({
            streamId: radioSessions.streamId,
            playbackId: radioSessions.playbackId,
            name: radioSessions.name,
            wallet: radioSessions.wallet,
            startedAt: radioSessions.startedAt,
          })
          .from(radioSessions)
          .where(and(eq(radioSessions.status, 'live'), gt(radioSessions.expiresAt, now), isNotNull(radioSessions.streamId)))
          .orderBy(asc(radioSessions.startedAt))
          .limit(SESSION_LIMIT),
      )
      .catch((dbError: unknown) => {
        log.error('radio.live_unavailable', { requestId, ...errorFields(dbError) })
        throw peerUnavailable('STREAMING_UNAVAILABLE', 'Radio status unavailable')
      })
    const reason = e instanceof ApiError && e.status === 503 ? 'Streaming provider not configured' : 'Streaming provider unavailable'
    result = view(fromSessions(sessions), pageUrl, `${reason}: served from cached sessions`)
  }
  await kv.set(LIVE_CACHE_KEY, result, { ttlMs: LIVE_CACHE_MS }).catch(() => {})
  return result
}
