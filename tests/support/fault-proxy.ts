import { createServer as createHttpServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http'
import { connect, createServer as createTcpServer, type Server, type Socket } from 'node:net'
import { expect } from 'vitest'
import type { useLogLines } from './log-lines'

/**
 * What the proxy does to traffic, switchable at any time:
 * - `pass`: forwards as is.
 * - `refuse`: stops listening, so a new connection is refused (ECONNREFUSED); open connections are reset.
 * - `reset`: accepts, then resets (RST) each connection, new and open (HTTP mode: each request's connection).
 * - `delay`: forwards everything `ms` late, in order (TCP: each chunk, both ways; HTTP: each request).
 * - `blackhole`: accepts and never answers: nothing is forwarded either way, connections stay open until closed.
 * - `status` (HTTP mode only): answers each request with `status` and a short text, never reaching the target.
 */
export type Fault =
  | { kind: 'pass' }
  | { kind: 'refuse' }
  | { kind: 'reset' }
  | { kind: 'delay'; ms: number }
  | { kind: 'blackhole' }
  | { kind: 'status'; status: number }

export interface FaultProxyOptions {
  /** The real peer: `host:port` (TCP) or a base URL (HTTP: `http://127.0.0.1:1234`; TCP takes its host and port too). */
  target: string
  /** `tcp` relays bytes (Postgres, Redis); `http` relays requests (the REST peers), one fault decision per request. */
  mode: 'tcp' | 'http'
  /**
   * HTTP mode: forward the client's own `Host` header (a transparent proxy) instead of the target's, for a peer whose
   * request signatures cover the host the client addressed (CDP's bearer tokens name `METHOD host/path`).
   */
  keepHost?: boolean
}

export interface FaultProxy {
  /** `http://127.0.0.1:<port>` (HTTP mode); in TCP mode the same form, for building a connection string from `port`. */
  url: string
  host: string
  port: number
  fault: Fault
  /** Switches the fault; resolves once it is in force (for `refuse` and back: the listener stopped or listening again). */
  set(fault: Fault | 'pass' | 'refuse' | 'reset' | 'blackhole'): Promise<void>
  /** Connections accepted so far (TCP mode) or requests received (HTTP mode). */
  readonly seen: number
  close(): Promise<void>
}

/**
 * A fault-injecting proxy on the loopback interface in front of a real peer the tests already run (Postgres, the
 * Upstash-REST server, the QStash look-alike, s3rver, anvil, the fake providers): point the code under test at
 * `proxy.url` / `proxy.port` instead of the peer's and switch faults while traffic flows.
 */
export async function startFaultProxy(opts: FaultProxyOptions): Promise<FaultProxy> {
  const target = parseTarget(opts.target)
  const sockets = new Set<Socket>()
  const timers = new Set<ReturnType<typeof setTimeout>>()
  let fault: Fault = { kind: 'pass' }
  let seen = 0
  let port = 0
  let closed = false

  const later = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        timers.delete(t)
        resolve()
      }, ms)
      timers.add(t)
    })
  const reset = (s: Socket) => (s.destroyed ? undefined : s.resetAndDestroy())

  let server: Server
  if (opts.mode === 'tcp') {
    server = createTcpServer((client) => {
      seen++
      client.on('error', () => {}) // a reset from either side is the point here, not a failure of the proxy
      if (fault.kind === 'reset') return void reset(client)
      const upstream = connect(target.port, target.host)
      track(client)
      track(upstream)
      client.on('error', () => upstream.destroy())
      upstream.on('error', () => reset(client))
      client.on('close', () => upstream.destroy())
      upstream.on('close', () => client.destroy())
      relay(client, upstream)
      relay(upstream, client)
    })
  } else {
    server = createHttpServer((req, res) => {
      seen++
      track(req.socket)
      void handleHttp(req, res)
    })
    // Long-lived keep-alive from the client side must not outlast a switch to `reset`/`refuse`.
    server.on('connection', (s: Socket) => track(s))
  }

  function track(s: Socket) {
    if (sockets.has(s)) return
    sockets.add(s)
    s.on('error', () => {})
    s.on('close', () => sockets.delete(s))
  }

  /** Forwards `from` → `to` chunk by chunk, deciding each chunk's fate by the fault in force when it arrives, in order. */
  function relay(from: Socket, to: Socket) {
    let chain = Promise.resolve()
    from.on('data', (chunk: Buffer) => {
      const now = fault
      if (now.kind === 'blackhole') return
      chain = chain.then(async () => {
        if (now.kind === 'delay') await later(now.ms)
        if (!to.destroyed) to.write(chunk)
      })
    })
    from.on('end', () => {
      chain = chain.then(() => {
        if (!to.destroyed && fault.kind !== 'blackhole') to.end()
      })
    })
  }

  async function handleHttp(req: IncomingMessage, res: ServerResponse) {
    const now = fault
    if (now.kind === 'reset' || now.kind === 'refuse') return reset(req.socket)
    if (now.kind === 'blackhole') return req.resume() // read and ignore: no answer ever
    if (now.kind === 'status') {
      req.resume()
      return void res.writeHead(now.status, { 'content-type': 'text/plain', connection: 'close' }).end(`fault proxy: ${now.status}`)
    }
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    if (now.kind === 'delay') await later(now.ms)
    if (closed || req.socket.destroyed) return
    const headers = opts.keepHost ? req.headers : { ...req.headers, host: `${target.host}:${target.port}` }
    const up = httpRequest({ host: target.host, port: target.port, method: req.method, path: req.url, headers }, (answer) => {
      // One request per connection: a client's pooled connection never carries a request into a later fault.
      res.writeHead(answer.statusCode ?? 502, { ...answer.headers, connection: 'close' })
      answer.pipe(res)
    })
    up.on('error', () => reset(req.socket)) // the target itself is gone: the client sees its connection reset
    up.end(Buffer.concat(chunks))
  }

  const listen = (p: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(p, '127.0.0.1', () => {
        server.off('error', reject)
        resolve()
      })
    })
  const stopListening = () => new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()))

  // A refused proxy gives its port up and takes it back: a port the kernel hands out to `listen(0)` (the ephemeral
  // range, from 32768 on Linux) could meanwhile go to another test's server. Ports below that range go to no one
  // who does not name them; a clash with another proxy's pick is retried.
  for (let attempt = 0; ; attempt++) {
    const candidate = attempt < 50 ? 20_000 + Math.floor(Math.random() * 12_000) : 0
    try {
      await listen(candidate)
      break
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE' || candidate === 0) throw e
    }
  }
  port = (server.address() as { port: number }).port

  async function set(next: FaultProxy['fault'] | 'pass' | 'refuse' | 'reset' | 'blackhole') {
    const was = fault
    fault = typeof next === 'string' ? ({ kind: next } as Fault) : next
    if (fault.kind === 'refuse' || fault.kind === 'reset') for (const s of sockets) reset(s)
    if (fault.kind === 'refuse' && was.kind !== 'refuse') {
      const stopped = stopListening() // resolves once the open connections (just reset) are gone
      for (const s of sockets) reset(s)
      await stopped
    }
    if (fault.kind !== 'refuse' && was.kind === 'refuse' && !closed) await listen(port) // the same port again
  }

  return {
    url: `http://127.0.0.1:${port}`,
    host: '127.0.0.1',
    get port() {
      return port
    },
    get fault() {
      return fault
    },
    set fault(f: Fault) {
      void set(f)
    },
    set,
    get seen() {
      return seen
    },
    async close() {
      closed = true
      for (const t of timers) clearTimeout(t)
      timers.clear()
      for (const s of sockets) s.destroy()
      await stopListening()
    },
  }
}

function parseTarget(target: string): { host: string; port: number } {
  const url = new URL(/^[a-z]+:\/\//i.test(target) ? target : `tcp://${target}`)
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80))
  return { host: url.hostname === 'localhost' ? '127.0.0.1' : url.hostname, port }
}

/** Runs `fn` with `proxy` under `fault`, timing it; the proxy passes traffic again afterwards, whatever `fn` did. */
export async function underFault<T>(proxy: FaultProxy, fault: Parameters<FaultProxy['set']>[0], fn: () => T | Promise<T>): Promise<{ value: T; ms: number }> {
  await proxy.set(fault)
  try {
    const started = performance.now()
    const value = await fn()
    return { value, ms: performance.now() - started }
  } finally {
    await proxy.set('pass')
  }
}

/**
 * A peer's outage answered as documented: 503 with `Retry-After: 5` and `body`, within `withinMs` of the request, and
 * exactly one log line `event` naming the peer (`dependency`).
 */
export async function expectPeerUnavailable(
  logs: ReturnType<typeof useLogLines>,
  res: Response,
  ms: number,
  expected: { body: unknown; withinMs: number; event: string; dependency: string },
) {
  expect(res.status).toBe(503)
  expect(res.headers.get('retry-after')).toBe('5')
  expect(await res.json()).toEqual(expected.body)
  expect(ms).toBeLessThan(expected.withinMs)
  logs.expectOne(expected.event, { dependency: expected.dependency })
}
