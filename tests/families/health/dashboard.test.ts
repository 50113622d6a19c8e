import http from 'node:http'
import net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { app as healthApp } from '../../../functions/health/app'
import { createPlatformApp } from '../../../lib/app'
import {
  DASHBOARD_PROBE_TIMINGS,
  describeFailure,
  parseProbeTargets,
  probeService,
  type ProbeTimings,
} from '../../../lib/probe/service-probe'
import { useHarness } from '../../support/harness'
import { closedPort, listen } from '../../support/loopback'

/** Loopback peers for the probes: real sockets, so the failure details are the ones undici really produces. */
interface Peer {
  url: string
  port: number
  /** TCP connections accepted so far (undici may open one ahead of need after an aborted request). */
  connections: number
  /** Connections on which a request arrived: one per attempt, as nothing here answers twice on a socket. */
  requests: number
  close(): Promise<void>
}

/** `server` on a loopback port, counting what reaches it. */
async function peer(server: net.Server, onSocket?: (s: net.Socket) => void): Promise<Peer> {
  const counts = { connections: 0, requests: 0 }
  server.on('connection', (s: net.Socket) => {
    counts.connections++
    s.once('data', () => counts.requests++)
    s.on('error', () => {})
    onSocket?.(s)
  })
  return Object.assign(counts, await listen(server))
}

/** An HTTP server answering every request with `status` and `body` (JSON when an object). */
const httpPeer = (status: number, body: unknown) =>
  peer(
    http.createServer((_req, res) => {
      const text = typeof body === 'string' ? body : JSON.stringify(body)
      res.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json' })
      res.end(text)
    }),
  )

/** Accepts TCP connections and never says a word. */
const hangingPeer = () => peer(net.createServer())

/** Accepts and immediately closes every connection. */
const slammingPeer = () => peer(net.createServer(), (s) => s.destroy())

const FAST: ProbeTimings = { candidateTimeoutMs: 200, retryTimeoutMs: 400 }

let live: Peer
let build: Peer
let unavailable: Peer
let slam: Peer
let refused: number

const h = useHarness()
beforeAll(async () => {
  ;[live, build, unavailable, slam] = await Promise.all([
    httpPeer(200, { status: 'live' }),
    httpPeer(200, { build: 'abc' }),
    httpPeer(503, { error: 'maintenance' }),
    slammingPeer(),
  ])
  refused = await closedPort()
  // Node loads undici on the first fetch; do it here so the first short-timeout probe is not charged for it.
  await (await fetch(live.url)).text()
})
afterAll(() => Promise.all([live, build, unavailable, slam].map((p) => p?.close())))

/** The health family with `HEALTH_PROBE_URLS` set to `setting`. */
function dashboard(setting: string | undefined, backendUrl?: string) {
  const config = { ...h.services.config, HEALTH_PROBE_URLS: setting, BACKEND_URL: backendUrl ?? h.services.config.BACKEND_URL }
  return createPlatformApp(() => ({ ...h.services, config })).route('/', healthApp)
}

async function getDashboard(setting: string | undefined, backendUrl?: string) {
  const res = await dashboard(setting, backendUrl).request('/api/dashboard/health')
  expect(res.status).toBe(200)
  const body = (await res.json()) as { services: Array<{ name: string; status: string; detail: string }>; timestamp: string }
  return { res, body }
}

describe('dashboard health: through the route', () => {
  it('reports each configured service with status and detail, in order, with the cache header', async () => {
    const { res, body } = await getDashboard(
      `web=${live.url}/health,builder=${build.url}/,queue=${unavailable.url}/,db=http://127.0.0.1:${refused}/`,
    )
    expect(res.headers.get('cache-control')).toBe('max-age=30, stale-while-revalidate=60')
    expect(body.services).toEqual([
      { name: 'web', status: 'ok', detail: 'live' },
      { name: 'builder', status: 'ok', detail: 'abc' },
      { name: 'queue', status: 'degraded', detail: '503' },
      { name: 'db', status: 'down', detail: 'connection refused' },
    ])
    expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp)
    expect(Object.keys(body).sort()).toEqual(['services', 'timestamp'])
  })

  it('uses the fallback candidate when the primary refuses', async () => {
    const { body } = await getDashboard(`web=http://127.0.0.1:${refused}/|${live.url}/`)
    expect(body.services).toEqual([{ name: 'web', status: 'ok', detail: 'live' }])
  })

  it('probes the backend /health when HEALTH_PROBE_URLS is unset', async () => {
    const { body } = await getDashboard(undefined, `${live.url}/`)
    expect(body.services).toEqual([{ name: 'backend', status: 'ok', detail: 'live' }])
  })

  it('needs no session and answers a browser on the dashboard origin', async () => {
    const res = await dashboard(`web=${live.url}/`).request('/api/dashboard/health', { headers: { origin: 'http://localhost:3000' } })
    expect(res.status).toBe(200)
    expect(res.headers.get('access-control-allow-origin')).toBe('http://localhost:3000')
  })

  it(
    'a never-answering service is down with `timeout (8s)` after 6 s + 8 s, and two of them take no longer than one',
    async () => {
      const [a, b] = await Promise.all([hangingPeer(), hangingPeer()])
      try {
        const started = performance.now()
        const { body } = await getDashboard(`a=${a.url}/health,b=${b.url}/health`)
        const elapsed = performance.now() - started
        expect(body.services).toEqual([
          { name: 'a', status: 'down', detail: 'timeout (8s)' },
          { name: 'b', status: 'down', detail: 'timeout (8s)' },
        ])
        // 6 s candidate + 8 s retry on the primary; sequential probing would need 28 s.
        expect(elapsed).toBeGreaterThanOrEqual(14_000)
        expect(elapsed).toBeLessThan(20_000)
        // One candidate attempt, then exactly one retry, on each primary.
        expect(a.requests).toBe(2)
        expect(b.requests).toBe(2)
      } finally {
        await Promise.all([a.close(), b.close()])
      }
    },
    30_000,
  )
})

describe('dashboard health: probeService', () => {
  it('the default timings are the spec’s 6 s per candidate and 8 s for the retry', () => {
    expect(DASHBOARD_PROBE_TIMINGS).toEqual({ candidateTimeoutMs: 6000, retryTimeoutMs: 8000 })
  })

  it('200 JSON: detail from active, ready, status or build (in that order), else `ok`', async () => {
    const peers = await Promise.all([
      httpPeer(200, { active: 3, status: 'ignored' }),
      httpPeer(200, { ready: true }),
      httpPeer(200, { status: { nested: 1 }, build: 'b-1' }),
      httpPeer(200, { uptime: 5 }),
      httpPeer(200, 'plain text'),
    ])
    try {
      const results = await Promise.all(peers.map((p, i) => probeService({ name: `s${i}`, urls: [`${p.url}/`] }, FAST)))
      expect(results.map((r) => [r.status, r.detail])).toEqual([
        ['ok', '3'],
        ['ok', 'true'],
        ['ok', 'b-1'],
        ['ok', 'ok'],
        ['ok', 'ok'],
      ])
    } finally {
      await Promise.all(peers.map((p) => p.close()))
    }
  })

  it('non-2xx is degraded with the HTTP status; a redirect is not followed', async () => {
    const redirect = await listen(
      http.createServer((_req, res) => {
        res.writeHead(302, { location: `${live.url}/` })
        res.end()
      }),
    )
    try {
      expect(await probeService({ name: 'q', urls: [`${unavailable.url}/`] }, FAST)).toEqual({ name: 'q', status: 'degraded', detail: '503' })
      expect(await probeService({ name: 'r', urls: [`${redirect.url}/`] }, FAST)).toEqual({ name: 'r', status: 'degraded', detail: '302' })
    } finally {
      await redirect.close()
    }
  })

  it('a non-2xx primary falls through to a healthy fallback; all non-2xx reports the first status', async () => {
    expect(await probeService({ name: 'x', urls: [`${unavailable.url}/`, `${live.url}/`] }, FAST)).toEqual({ name: 'x', status: 'ok', detail: 'live' })
    expect(await probeService({ name: 'x', urls: [`${unavailable.url}/`, `http://127.0.0.1:${refused}/`] }, FAST)).toEqual({
      name: 'x',
      status: 'degraded',
      detail: '503',
    })
  })

  it('a hanging primary falls through to the fallback after the candidate timeout', async () => {
    const hang = await hangingPeer()
    try {
      const started = performance.now()
      const r = await probeService({ name: 'x', urls: [`${hang.url}/`, `${build.url}/`] }, FAST)
      expect(r).toEqual({ name: 'x', status: 'ok', detail: 'abc' })
      expect(performance.now() - started).toBeGreaterThanOrEqual(FAST.candidateTimeoutMs - 20)
      expect(hang.requests).toBe(1) // no retry once a candidate answered
    } finally {
      await hang.close()
    }
  })

  it('refused port: down / `connection refused`', async () => {
    expect(await probeService({ name: 'x', urls: [`http://127.0.0.1:${refused}/`] }, FAST)).toEqual({
      name: 'x',
      status: 'down',
      detail: 'connection refused',
    })
  })

  it('a server that closes the socket on connect: down / `connection reset`, after one retry on the primary only', async () => {
    // undici reports a peer that closes before answering as SocketError `other side closed` (code UND_ERR_SOCKET);
    // describeFailure checks the "other side closed" text before the UND_ERR_SOCKET code, so it maps to
    // `connection reset` rather than `socket error`.
    const fallback = await slammingPeer()
    try {
      const before = slam.connections
      const r = await probeService({ name: 'x', urls: [`${slam.url}/`, `${fallback.url}/`] }, FAST)
      expect(r).toEqual({ name: 'x', status: 'down', detail: 'connection reset' })
      expect(slam.connections - before).toBe(2) // candidate + the retry
      expect(fallback.connections).toBe(1) // candidate only
    } finally {
      await fallback.close()
    }
  })

  it('an unresolvable host: down / `dns error`', async () => {
    expect(await probeService({ name: 'x', urls: ['http://does-not-exist.invalid/health'] }, FAST)).toEqual({
      name: 'x',
      status: 'down',
      detail: 'dns error',
    })
  })

  it('a never-answering server: down, the timeout detail derived from the retry timeout (rounded to seconds)', async () => {
    const hang = await hangingPeer()
    try {
      const started = performance.now()
      const r = await probeService({ name: 'x', urls: [`${hang.url}/`] }, FAST)
      const elapsed = performance.now() - started
      // Math.round(400 / 1000) = 0: the detail says `timeout (0s)` for sub-second retries.
      expect(r).toEqual({ name: 'x', status: 'down', detail: 'timeout (0s)' })
      expect(elapsed).toBeGreaterThanOrEqual(FAST.candidateTimeoutMs + FAST.retryTimeoutMs - 20)
      expect(elapsed).toBeLessThan(FAST.candidateTimeoutMs + FAST.retryTimeoutMs + 1000)
      expect(hang.requests).toBe(2)
    } finally {
      await hang.close()
    }
  })

  it('several services are probed concurrently: two hanging services finish in about one service’s time', async () => {
    const [a, b] = await Promise.all([hangingPeer(), hangingPeer()])
    try {
      const started = performance.now()
      const results = await Promise.all([a, b].map((p, i) => probeService({ name: `h${i}`, urls: [`${p.url}/`] }, FAST)))
      const elapsed = performance.now() - started
      expect(results.map((r) => r.detail)).toEqual(['timeout (0s)', 'timeout (0s)'])
      const one = FAST.candidateTimeoutMs + FAST.retryTimeoutMs
      expect(elapsed).toBeGreaterThanOrEqual(one - 20)
      expect(elapsed).toBeLessThan(2 * one)
    } finally {
      await Promise.all([a.close(), b.close()])
    }
  })
})

describe('dashboard health: describeFailure', () => {
  const fetchFailed = (cause: object) => Object.assign(new TypeError('fetch failed'), { cause })

  it('maps undici and workerd failures to the fixed detail strings', () => {
    const timeout = Object.assign(new Error('The operation was aborted due to timeout'), { name: 'TimeoutError' })
    expect(describeFailure(timeout, 8000)).toBe('timeout (8s)')
    expect(describeFailure(Object.assign(new Error('aborted'), { name: 'AbortError' }), 8000)).toBe('timeout (8s)')
    expect(describeFailure(fetchFailed({ code: 'ENOTFOUND', message: 'getaddrinfo ENOTFOUND x.invalid' }), 8000)).toBe('dns error')
    expect(describeFailure(fetchFailed({ code: 'EAI_AGAIN', message: 'getaddrinfo EAI_AGAIN x' }), 8000)).toBe('dns error')
    expect(describeFailure(fetchFailed({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:9' }), 8000)).toBe('connection refused')
    expect(describeFailure(fetchFailed({ code: 'ECONNRESET', message: 'read ECONNRESET' }), 8000)).toBe('connection reset')
    expect(describeFailure(fetchFailed({ code: 'UND_ERR_SOCKET', message: 'other side closed' }), 8000)).toBe('connection reset')
    expect(describeFailure(fetchFailed({ code: 'UND_ERR_SOCKET', message: 'write EPIPE' }), 8000)).toBe('socket error')
    expect(describeFailure(fetchFailed({ code: 'UND_ERR_CONNECT_TIMEOUT', message: 'Connect Timeout Error' }), 8000)).toBe('timeout (8s)')
    expect(describeFailure(new Error('Network connection lost.'), 8000)).toBe('connection reset') // workerd wording
    expect(describeFailure(fetchFailed({ message: 'bad port' }), 8000)).toBe('unreachable')
    expect(describeFailure(undefined, 8000)).toBe('unreachable')
  })
})

describe('dashboard health: parseProbeTargets', () => {
  it('unset or empty: the backend /health (trailing slashes trimmed)', () => {
    expect(parseProbeTargets(undefined, 'http://127.0.0.1:8788')).toEqual([{ name: 'backend', urls: ['http://127.0.0.1:8788/health'] }])
    expect(parseProbeTargets('', 'https://api.example.com//')).toEqual([{ name: 'backend', urls: ['https://api.example.com/health'] }])
  })

  it('`name=url|fallback,name2=url` with whitespace, `=` inside URLs, and junk entries dropped', () => {
    expect(
      parseProbeTargets(' web = http://a/health | http://b/health , api=http://c/status?x=1&y=2,,noequals,=http://d,empty=', 'http://unused'),
    ).toEqual([
      { name: 'web', urls: ['http://a/health', 'http://b/health'] },
      { name: 'api', urls: ['http://c/status?x=1&y=2'] },
    ])
  })
})
