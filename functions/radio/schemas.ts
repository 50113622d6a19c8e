import { z } from '@hono/zod-openapi'
import { walletProofFields } from '../../lib/http/fields'
import { MAX_SESSION_SEC } from './sessions'

const iso = (description: string) => z.string().max(64).openapi({ format: 'date-time', description })
const url = (description: string) => z.string().max(2048).openapi({ format: 'uri', description })
const id = (description: string) => z.string().max(255).openapi({ description })

export const CreateStreamBody = z
  .object({
    wallet: z
      .string({ error: 'wallet is required' })
      .max(42, 'Invalid wallet address')
      .regex(/^0x[0-9a-fA-F]{40}$/, 'Invalid wallet address')
      .openapi({ description: "The DJ's smart wallet: `0x` + 40 hex characters, any case", example: '0x1111111111111111111111111111111111111111' }),
    name: z.string().trim().max(64, 'name must be at most 64 characters').optional().openapi({ description: 'Shown to listeners; `DJ` when missing or blank' }),
    city: z.string().trim().max(80, 'city must be at most 80 characters').optional().openapi({ description: 'At most 80 characters after trimming; blank is none' }),
    txHash: z
      .string()
      .max(66, 'Invalid txHash')
      .regex(/^0x[0-9a-fA-F]{64}$/, 'Invalid txHash')
      .optional()
      .openapi({ description: 'The 5 USDC session fee transfer (only read when neither the holding nor a guest pass applies)' }),
    ...walletProofFields('wallet'),
  })
  .openapi('CreateRadioStream')

export const CreatedStreamSchema = z
  .object({
    success: z.literal(true),
    stream: z.object({
      id: id('The Mux live stream id (the `:id` of `DELETE /api/radio/streams/:id`)'),
      name: z.string().max(64),
      wallet: z.string().max(42).openapi({ description: 'Checksummed' }),
      streamKey: z.string().max(255).openapi({ description: 'The ingest credential: shown only in this answer, never stored or listed' }),
      rtmpUrl: url('Mux RTMPS ingest (`rtmps://global-live.mux.com:443/app`)'),
      fullRtmpUrl: url('`rtmpUrl/streamKey`: what an encoder pushes to'),
      playbackId: id('Public playback id: `https://stream.mux.com/<playbackId>.m3u8`'),
      status: z.literal('created').openapi({ description: 'Live only once an encoder connects to the ingest address' }),
    }),
    session: z.object({
      id: id('The session'),
      wallet: z.string().max(42),
      maxDuration: z.literal(MAX_SESSION_SEC).openapi({ description: 'Seconds' }),
      remaining: z.number().int().min(0).max(MAX_SESSION_SEC).openapi({ format: 'int32', description: 'Seconds until `expiresAt`' }),
      expiresAt: iso('When the session is ended automatically (`auto-ended`)'),
      accessToken: z.string().max(1024).openapi({ description: 'The DJ access token: `Authorization: Bearer <accessToken>` ends the session; valid until `expiresAt`' }),
    }),
    ffmpeg: z
      .object({
        rtmpUrl: url('Same as `stream.fullRtmpUrl`'),
        video: z.string().max(4096).openapi({ description: 'Command for a source with video and audio (replace `INPUT`)' }),
        audioOnly: z.string().max(4096).openapi({ description: 'Command for an audio-only source (a mix, a sound card): adds a still black picture' }),
        notes: z.array(z.string().max(512)).max(10),
      })
      .openapi({ description: 'Ready-to-run ffmpeg commands (H.264 + AAC over RTMPS, 2 s keyframes, as Mux recommends)' }),
  })
  .openapi('CreatedRadioStream')

const LiveDjSchema = z
  .object({
    id: id('Stream id'),
    name: z.string().max(64).openapi({ description: 'From the session; `Anonymous DJ` for a stream without one' }),
    wallet: z.string().max(42).nullable(),
    playbackId: id('Public playback id'),
    streamKey: z.null().openapi({ description: 'Always null: stream keys are credentials and are never listed' }),
    status: z.literal('active'),
    startedAt: z.union([iso('From the session'), z.number().int().min(0).max(2 ** 40).openapi({ format: 'int64', description: "Unix seconds: Mux's creation time, for a stream without a session" })]),
    source: z.enum(['mux', 'session-cache']).openapi({ description: '`mux`: listed by Mux now; `session-cache`: from the session records while Mux is unreachable' }),
    hlsUrl: url('`https://stream.mux.com/<playbackId>.m3u8`'),
    embedUrl: url('`https://player.mux.com/<playbackId>`'),
  })
  .openapi('LiveDj')

const firstPartyStatus = z.enum(['pending', 'healthy', 'degraded', 'failed', 'stopped'])

export const LiveViewSchema = z
  .object({
    djs: z.array(LiveDjSchema).max(100).openapi({ description: 'On air, longest-running first' }),
    count: z.number().int().min(0).max(100).openapi({ format: 'int32' }),
    primaryDj: z.union([LiveDjSchema, z.null()]).openapi({ description: 'The longest-running DJ (the first of `djs`), or null' }),
    availability: z.enum(['live', 'idle', 'degraded']),
    error: z.string().max(256).optional().openapi({ description: 'Only when `degraded`: why Mux was not asked' }),
    distribution: z.object({
      origin: z.object({
        status: z.enum(['active', 'idle', 'degraded']),
        playbackId: z.string().max(255).nullable(),
        hlsUrl: url('The primary DJ\'s HLS URL').nullable(),
      }),
      firstParty: z.object({
        status: firstPartyStatus.openapi({ description: '`healthy` with a DJ on air, `stopped` with none, `degraded` from the session records' }),
        pageUrl: url('The radio page: `{base_url}/radio`'),
        note: z.string().max(256),
      }),
      relays: z
        .array(z.object({ name: z.string().max(64), status: firstPartyStatus }))
        .max(16)
        .openapi({ description: 'Relays restreaming the origin: none are configured, so always empty' }),
      requiredRelayStatus: z.literal('none').openapi({ description: 'No relay is required to be healthy' }),
      overallStatus: firstPartyStatus,
    }),
  })
  .openapi('RadioLive')

export const EndStreamBody = z
  .object({ archive: z.boolean({ error: 'archive must be a boolean' }).optional().openapi({ description: '`true`: keep the recordings (`archived`); else they are deleted (`ended`)' }) }, { error: 'Request body must be a JSON object' })
  .openapi('EndRadioStream')

export const EndedStreamSchema = z
  .object({
    success: z.literal(true),
    alreadyEnded: z.boolean().openapi({ description: 'true when an earlier call had already ended it this way (nothing was done now)' }),
    session: z.object({
      id: id('The session'),
      wallet: z.string().max(42),
      status: z.enum(['ended', 'archived']),
      endedAt: iso('When it ended'),
    }),
    stream: z.object({ id: id('The Mux live stream'), assetsDeleted: z.number().int().min(0).max(10_000).openapi({ format: 'int32', description: 'Recordings deleted now (`ended` only)' }) }),
  })
  .openapi('EndedRadioStream')

export const MuxEventSchema = z
  .object({
    id: z.string().min(1).max(255).openapi({ description: 'The event id: each is applied once' }),
    type: z.string().min(1).max(255).openapi({ description: 'e.g. `video.live_stream.active`' }),
    object: z.object({ type: z.string().max(255).optional(), id: z.string().max(255).optional() }).optional(),
    data: z.object({ id: z.string().max(255).optional() }).passthrough().optional().openapi({ description: 'The live stream (`id`) as Mux has it now' }),
  })
  .passthrough()
  .openapi('MuxEvent', { description: 'A Mux webhook event (only the fields this service reads are listed)' })

export const WebhookAckSchema = z
  .object({
    received: z.literal(true),
    outcome: z.enum(['applied', 'duplicate', 'ignored', 'unchanged']).openapi({
      description: '`applied` moved a session; `duplicate` was applied before; `ignored` is an event type with no effect; `unchanged` found no session in a state the event moves',
    }),
  })
  .openapi('MuxWebhookAck')

export const ExpireMessage = z
  .object({ sessionId: z.string().min(1).max(64).optional().openapi({ description: 'The session to end; without it, a sweep' }) })
  .openapi('RadioExpireMessage', { description: '`{sessionId}` published at creation with a 2-hour delay; `{}` from the cron: sweep' })

export const ExpireResultSchema = z
  .object({
    ok: z.literal(true),
    ended: z.number().int().min(0).max(1000).openapi({ format: 'int32', description: 'Sessions moved to `auto-ended` now' }),
    failed: z.number().int().min(0).max(1000).openapi({ format: 'int32', description: 'Sessions Mux could not disable (left for the next sweep)' }),
  })
  .openapi('RadioExpireResult')
