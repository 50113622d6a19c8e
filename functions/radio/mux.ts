import type { Config } from '../../lib/config'
import { deadline } from '../../lib/deadline'
import { ApiError } from '../../lib/http/errors'

/**
 * Mux Video's REST API over fetch (https://docs.mux.com/api-reference): the five live-stream calls the radio
 * makes, basic auth with the access token id and secret, every call bounded by `MUX_TIMEOUT_MS`. Not the
 * `@mux/mux-node` SDK: it is not installed here, its generated client carries every Mux resource into the
 * bundle, and these calls are a few lines each.
 */

/** Where encoders push (RTMPS on 443; Mux also takes plain RTMP on `rtmp://global-live.mux.com:5222/app`). */
export const MUX_RTMP_URL = 'rtmps://global-live.mux.com:443/app'
export const hlsUrl = (playbackId: string) => `https://stream.mux.com/${playbackId}.m3u8`
export const embedUrl = (playbackId: string) => `https://player.mux.com/${playbackId}`

/** A live stream as Mux returns it (the fields read here). `created_at` is Unix seconds as a string. */
export interface MuxLiveStream {
  id: string
  stream_key?: string
  status: 'idle' | 'active' | 'disabled' | string
  playback_ids?: Array<{ id: string; policy: string }>
  passthrough?: string
  created_at?: string
  active_asset_id?: string
  recent_asset_ids?: string[]
}

/** Mux did not answer in time, answered 5xx or refused the call; `status` 0 when it did not answer at all. */
export class MuxError extends Error {
  constructor(readonly status: number, message: string) {
    super(message)
    this.name = 'MuxError'
  }
}

export interface MuxClient {
  createLiveStream(opts: { passthrough: string; maxContinuousSec: number }): Promise<MuxLiveStream>
  getLiveStream(id: string): Promise<MuxLiveStream | null>
  listActiveLiveStreams(): Promise<MuxLiveStream[]>
  /** Refuses new ingest and ends the current broadcast; false when Mux has no such stream. */
  disableLiveStream(id: string): Promise<boolean>
  deleteLiveStream(id: string): Promise<boolean>
  deleteAsset(id: string): Promise<boolean>
}

/** The first playback id of a stream (public: the live stream is created with a public policy). */
export const playbackIdOf = (stream: MuxLiveStream) => stream.playback_ids?.find((p) => p.policy === 'public')?.id ?? stream.playback_ids?.[0]?.id ?? null

/** 503 `Streaming not configured` without the Mux access token. */
export function muxClient(config: Pick<Config, 'MUX_TOKEN_ID' | 'MUX_TOKEN_SECRET' | 'MUX_API_URL' | 'MUX_TIMEOUT_MS'>): MuxClient {
  const { MUX_TOKEN_ID: id, MUX_TOKEN_SECRET: secret } = config
  if (!id || !secret) throw new ApiError('NOT_CONFIGURED', 'Streaming not configured')
  const base = `${config.MUX_API_URL.replace(/\/+$/, '')}/video/v1`
  const authorization = `Basic ${btoa(`${id}:${secret}`)}`

  /** The JSON answer's `data`; null for a 404 when `missingOk`. Throws MuxError otherwise. */
  async function call<T>(method: string, path: string, body?: unknown, missingOk = false): Promise<T | null> {
    // The whole exchange, the answer's body included, within MUX_TIMEOUT_MS.
    const bound = deadline(config.MUX_TIMEOUT_MS)
    try {
      let res: Response
      try {
        res = await fetch(`${base}${path}`, {
          method,
          headers: { authorization, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: bound.signal,
        })
      } catch {
        throw new MuxError(0, bound.timedOut ? `Mux did not answer within ${config.MUX_TIMEOUT_MS} ms` : 'Mux unreachable')
      }
      if (res.status === 404 && missingOk) {
        await res.body?.cancel()
        return null
      }
      if (!res.ok) {
        await res.body?.cancel()
        throw new MuxError(res.status, `Mux answered ${res.status} to ${method}`)
      }
      if (res.status === 204) return {} as T
      try {
        const json = (await res.json()) as { data?: T }
        return (json?.data ?? {}) as T
      } catch {
        throw new MuxError(res.status, 'Mux answered with a body that is not JSON')
      }
    } finally {
      bound.clear()
    }
  }

  return {
    async createLiveStream({ passthrough, maxContinuousSec }) {
      const stream = await call<MuxLiveStream>('POST', '/live-streams', {
        playback_policies: ['public'],
        new_asset_settings: { playback_policies: ['public'] },
        passthrough,
        // Mux itself cuts a broadcast that runs longer than a session may.
        max_continuous_duration: maxContinuousSec,
      })
      if (!stream?.id || !stream.stream_key || !playbackIdOf(stream)) throw new MuxError(200, 'Mux created a live stream without id, stream key or playback id')
      return stream
    },
    getLiveStream: (streamId) => call<MuxLiveStream>('GET', `/live-streams/${encodeURIComponent(streamId)}`, undefined, true),
    async listActiveLiveStreams() {
      const streams = await call<MuxLiveStream[]>('GET', '/live-streams?status=active&limit=100')
      if (!Array.isArray(streams)) throw new MuxError(200, 'Mux listed live streams in an unexpected shape')
      return streams.filter((s) => s && typeof s.id === 'string' && s.status === 'active')
    },
    disableLiveStream: async (streamId) => (await call('PUT', `/live-streams/${encodeURIComponent(streamId)}/disable`, undefined, true)) !== null,
    deleteLiveStream: async (streamId) => (await call('DELETE', `/live-streams/${encodeURIComponent(streamId)}`, undefined, true)) !== null,
    deleteAsset: async (assetId) => (await call('DELETE', `/assets/${encodeURIComponent(assetId)}`, undefined, true)) !== null,
  }
}
