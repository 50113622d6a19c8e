import { createHmac } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { listen } from './loopback'

/**
 * A stand-in for Mux Video's REST API (a third-party API with no local peer) on loopback, for the calls the radio
 * makes (`MUX_API_URL` points the client here). Shapes follow Mux's API reference: HTTP basic auth with the access
 * token id and secret; answers `{data: ...}`; errors `{error: {type, messages: [...]}}` with 400
 * `invalid_parameters`, 401 `unauthorized`, 404 `not_found`; `created_at` is Unix seconds as a string; a new live
 * stream is `idle`, becomes `active` when an encoder connects (each broadcast records an asset, the
 * `active_asset_id`, then one of `recent_asset_ids`), and `disabled` refuses ingest and ends the broadcast.
 *
 * Endpoints: `POST /video/v1/live-streams` (`playback_policies` or the deprecated `playback_policy`,
 * `new_asset_settings`, `passthrough`, `max_continuous_duration` 60-43200), `GET /video/v1/live-streams`
 * (`status`, `limit`, `page`), `GET|DELETE /video/v1/live-streams/:id`, `PUT /video/v1/live-streams/:id/disable`,
 * `/enable`, `/complete`, `GET|DELETE /video/v1/assets/:id`.
 *
 * Test controls: `connect`/`disconnect` an encoder, `addForeignStream`, `fail(status, n)` / `down()` / `up()`,
 * `slow(ms)`, the request log, and Mux-shaped webhook events with their `mux-signature`.
 */

type Json = Record<string, unknown>
export type Policy = 'public' | 'signed' | 'drm'

export interface FakeLiveStream {
  id: string
  stream_key: string
  status: 'idle' | 'active' | 'disabled'
  playback_ids: Array<{ id: string; policy: Policy }>
  new_asset_settings?: Json
  passthrough?: string
  created_at: string
  latency_mode: 'standard'
  reconnect_window: number
  max_continuous_duration: number
  recent_asset_ids: string[]
  active_asset_id?: string
  test: boolean
}

export interface FakeAsset {
  id: string
  status: 'preparing' | 'ready'
  live_stream_id: string
  playback_ids: Array<{ id: string; policy: Policy }>
  created_at: string
  is_live: boolean
}

class MuxApiError extends Error {
  constructor(readonly status: number, readonly type: string, message: string) {
    super(message)
  }
}

const POLICIES = new Set(['public', 'signed', 'drm'])
const ALPHANUM = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'
/** Mux ids are long base62 strings. */
const muxId = (length = 40) => Array.from(crypto.getRandomValues(new Uint8Array(length)), (b) => ALPHANUM[b % ALPHANUM.length]).join('')
const nowSec = () => String(Math.floor(Date.now() / 1000))

function policies(value: unknown, field: string): Policy[] {
  const list = typeof value === 'string' ? [value] : value
  if (!Array.isArray(list) || list.some((p) => typeof p !== 'string' || !POLICIES.has(p))) {
    throw new MuxApiError(400, 'invalid_parameters', `${field} must be an array of public, signed or drm`)
  }
  return list as Policy[]
}

/** The `mux-signature` header Mux sends: `t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
export const muxSignature = (secret: string, body: string, timestamp = Math.floor(Date.now() / 1000)) =>
  `t=${timestamp},v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`

export async function startMuxServer(opts: { tokenId?: string; tokenSecret?: string; webhookSecret?: string } = {}) {
  const tokenId = opts.tokenId ?? crypto.randomUUID()
  const tokenSecret = opts.tokenSecret ?? muxId(60)
  const webhookSecret = opts.webhookSecret ?? muxId(32)
  const streams = new Map<string, FakeLiveStream>()
  const assets = new Map<string, FakeAsset>()
  const requests: Array<{ method: string; path: string; query: string; body: Json | null; authorized: boolean }> = []
  const failures: number[] = []
  let failAlways: number | null = null
  let delayMs = 0
  const timers = new Set<ReturnType<typeof setTimeout>>()

  function createLiveStream(body: Json): FakeLiveStream {
    const given = body.playback_policies ?? body.playback_policy
    const playback = given === undefined ? [] : policies(given, body.playback_policies !== undefined ? 'playback_policies' : 'playback_policy')
    const settings = body.new_asset_settings as Json | undefined
    if (settings !== undefined) {
      if (!settings || typeof settings !== 'object') throw new MuxApiError(400, 'invalid_parameters', 'new_asset_settings must be an object')
      const p = settings.playback_policies ?? settings.playback_policy
      if (p !== undefined) policies(p, 'new_asset_settings.playback_policies')
    }
    const max = body.max_continuous_duration ?? 43200
    if (typeof max !== 'number' || !Number.isInteger(max) || max < 60 || max > 43200) {
      throw new MuxApiError(400, 'invalid_parameters', 'max_continuous_duration must be an integer between 60 and 43200')
    }
    if (body.passthrough !== undefined && (typeof body.passthrough !== 'string' || body.passthrough.length > 255)) {
      throw new MuxApiError(400, 'invalid_parameters', 'passthrough must be a string of at most 255 characters')
    }
    const stream: FakeLiveStream = {
      id: muxId(),
      stream_key: crypto.randomUUID(),
      status: 'idle',
      playback_ids: playback.map((policy) => ({ id: muxId(), policy })),
      ...(settings ? { new_asset_settings: settings } : {}),
      ...(body.passthrough !== undefined ? { passthrough: body.passthrough as string } : {}),
      created_at: nowSec(),
      latency_mode: 'standard',
      reconnect_window: 60,
      max_continuous_duration: max,
      recent_asset_ids: [],
      test: false,
    }
    streams.set(stream.id, stream)
    return stream
  }

  const stream = (id: string) => {
    const s = streams.get(id)
    if (!s) throw new MuxApiError(404, 'not_found', 'The requested resource either doesn\'t exist or you don\'t have access to it.')
    return s
  }

  /** The broadcast ends: the recording becomes one of the stream's recent assets. */
  function endBroadcast(s: FakeLiveStream, status: 'idle' | 'disabled') {
    if (s.active_asset_id) {
      const asset = assets.get(s.active_asset_id)
      if (asset) Object.assign(asset, { status: 'ready', is_live: false })
      s.recent_asset_ids.push(s.active_asset_id)
      delete s.active_asset_id
    }
    s.status = status
  }

  function route(method: string, path: string, query: URLSearchParams, body: Json | null): { status: number; data?: unknown } {
    const parts = path.split('/').filter(Boolean) // video v1 live-streams :id action
    if (parts[0] !== 'video' || parts[1] !== 'v1') throw new MuxApiError(404, 'not_found', 'Not found')
    const [, , kind, id, action] = parts
    if (kind === 'live-streams') {
      if (!id && method === 'POST') return { status: 201, data: createLiveStream(body ?? {}) }
      if (!id && method === 'GET') {
        const limit = Math.min(Number(query.get('limit') ?? 25) || 25, 100)
        const page = Math.max(Number(query.get('page') ?? 1) || 1, 1)
        const status = query.get('status')
        const all = [...streams.values()].filter((s) => !status || s.status === status)
        return { status: 200, data: all.slice((page - 1) * limit, page * limit) }
      }
      if (id && !action && method === 'GET') return { status: 200, data: stream(id) }
      if (id && !action && method === 'DELETE') {
        const s = stream(id)
        endBroadcast(s, 'disabled')
        streams.delete(id)
        return { status: 204 }
      }
      if (id && method === 'PUT' && action === 'disable') {
        endBroadcast(stream(id), 'disabled')
        return { status: 200, data: {} }
      }
      if (id && method === 'PUT' && action === 'enable') {
        const s = stream(id)
        if (s.status === 'disabled') s.status = 'idle'
        return { status: 200, data: {} }
      }
      if (id && method === 'PUT' && action === 'complete') {
        const s = stream(id)
        if (s.status === 'active') endBroadcast(s, 'idle')
        return { status: 200, data: {} }
      }
    }
    if (kind === 'assets' && id && !action) {
      const asset = assets.get(id)
      if (!asset) throw new MuxApiError(404, 'not_found', 'The requested resource either doesn\'t exist or you don\'t have access to it.')
      if (method === 'GET') return { status: 200, data: asset }
      if (method === 'DELETE') {
        assets.delete(id)
        for (const s of streams.values()) s.recent_asset_ids = s.recent_asset_ids.filter((a) => a !== id)
        return { status: 204 }
      }
    }
    throw new MuxApiError(404, 'not_found', 'Not found')
  }

  const authorized = (req: IncomingMessage) => req.headers.authorization === `Basic ${Buffer.from(`${tokenId}:${tokenSecret}`).toString('base64')}`

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const url = new URL(req.url ?? '/', 'http://mux.local')
    const text = Buffer.concat(chunks).toString('utf8')
    let body: Json | null = null
    const send = (status: number, payload?: unknown) => {
      if (res.destroyed) return
      res.writeHead(status, payload === undefined ? {} : { 'content-type': 'application/json' })
      res.end(payload === undefined ? undefined : JSON.stringify(payload))
    }
    const fail = (e: MuxApiError) => send(e.status, { error: { type: e.type, messages: [e.message] } })
    try {
      body = text ? (JSON.parse(text) as Json) : null
    } catch {
      requests.push({ method: req.method!, path: url.pathname, query: url.search, body: null, authorized: authorized(req) })
      return fail(new MuxApiError(400, 'invalid_parameters', 'The request body is not valid JSON'))
    }
    requests.push({ method: req.method!, path: url.pathname, query: url.search, body, authorized: authorized(req) })
    if (delayMs) await new Promise<void>((r) => timers.add(setTimeout(r, delayMs)))
    const injected = failures.shift() ?? failAlways
    if (injected) return send(injected, { error: { type: 'server_error', messages: ['Something went wrong'] } })
    if (!authorized(req)) return fail(new MuxApiError(401, 'unauthorized', 'Unauthorized request'))
    try {
      const out = route(req.method!, url.pathname, url.searchParams, body)
      send(out.status, out.status === 204 ? undefined : { data: out.data })
    } catch (e) {
      if (e instanceof MuxApiError) fail(e)
      else send(500, { error: { type: 'server_error', messages: [String(e)] } })
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy())
  })
  const loopback = await listen(server)
  const url = loopback.url

  return {
    url,
    tokenId,
    tokenSecret,
    webhookSecret,
    streams,
    assets,
    /** Every request received, in order. */
    requests,
    /** The env a harness needs to use this account. */
    env: { MUX_API_URL: url, MUX_TOKEN_ID: tokenId, MUX_TOKEN_SECRET: tokenSecret, MUX_WEBHOOK_SECRET: webhookSecret },
    /** An encoder connects: the stream goes `active` and records a new asset. */
    connect(id: string) {
      const s = stream(id)
      if (s.status === 'disabled') throw new Error('a disabled stream refuses ingest')
      const asset: FakeAsset = { id: muxId(), status: 'preparing', live_stream_id: id, playback_ids: [{ id: muxId(), policy: 'public' }], created_at: nowSec(), is_live: true }
      assets.set(asset.id, asset)
      s.active_asset_id = asset.id
      s.status = 'active'
      return asset.id
    },
    /** The encoder stopped and the reconnect window passed: `idle`, the recording kept. */
    disconnect(id: string) {
      endBroadcast(stream(id), 'idle')
    },
    /** An active stream made outside this service (no session): listed as an anonymous DJ. */
    addForeignStream() {
      const s = createLiveStream({ playback_policies: ['public'] })
      this.connect(s.id)
      return s
    },
    /** The next `n` requests answer `status` (a Mux outage), whatever they ask. */
    fail(status = 500, n = 1) {
      for (let i = 0; i < n; i++) failures.push(status)
    },
    /** The next requests answer these statuses in turn, `0` meaning "as Mux would" (a failure midway). */
    nextAnswers(...statuses: number[]) {
      failures.push(...statuses)
    },
    down(status = 503) {
      failAlways = status
    },
    up() {
      failAlways = null
      failures.length = 0
      delayMs = 0
    },
    /** Every answer waits `ms` first (a slow Mux). */
    slow(ms: number) {
      delayMs = ms
    },
    /** A webhook event as Mux sends it, for `stream` (its current state as `data`). */
    event(type: string, s: FakeLiveStream | { id: string }, o: { id?: string } = {}) {
      return {
        type,
        id: o.id ?? crypto.randomUUID(),
        created_at: new Date().toISOString(),
        object: { type: 'live_stream', id: s.id },
        data: { ...s },
        environment: { name: 'Production', id: 'env-test' },
        attempts: [],
        accessor_source: null,
        accessor: null,
        request_id: null,
      }
    },
    sign: (body: string, timestamp?: number, secret = webhookSecret) => muxSignature(secret, body, timestamp),
    close() {
      for (const t of timers) clearTimeout(t)
      return loopback.close()
    },
  }
}

export type MuxServer = Awaited<ReturnType<typeof startMuxServer>>
