import { createServer } from 'node:http'
import net from 'node:net'
import type { AddressInfo } from 'node:net'
import { neonConfig } from '@neondatabase/serverless'
import WebSocket, { WebSocketServer } from 'ws'
import { useLocalNeonProxy } from '../../lib/db/neon'
import { handleSqlOverHttp, type SqlOverHttp } from './neon-http'

/** What the app sent to the database through the proxy: round trips (request/response turns) and statements. */
export interface NeonTraffic {
  roundTrips: number
  statements: number
}

/**
 * A minimal stand-in for Neon's proxy, on one port. WebSocket (`/v1`): the Neon driver speaks the Postgres wire
 * protocol inside binary frames, so each WebSocket is bridged to a plain TCP socket on the real Postgres; the
 * target comes from `?address=host:port`, which `configureNeonForLocalProxy` makes the driver send. HTTP
 * (`POST /sql`): Neon's SQL-over-HTTP, see ./neon-http.ts. Both count what passes (`traffic`).
 */
export async function startNeonProxy(): Promise<{ port: number; traffic(): NeonTraffic; endDatabase(name: string): Promise<void>; close(): Promise<void> }> {
  const traffic: NeonTraffic = { roundTrips: 0, statements: 0 }
  const sqlOverHttp: SqlOverHttp = { pools: new Map(), traffic }
  const server = createServer((req, res) => void handleSqlOverHttp(sqlOverHttp, req, res))
  const wss = new WebSocketServer({ server })
  const open = new Set<{ ws: WebSocket; tcp: net.Socket; database?: string }>()

  wss.on('connection', (ws, req) => {
    const address = new URL(req.url ?? '/', 'ws://proxy').searchParams.get('address') ?? ''
    const sep = address.lastIndexOf(':') // lastIndexOf: tolerate IPv6 hosts
    const host = address.slice(0, sep).replace(/^\[|\]$/g, '')
    const port = Number(address.slice(sep + 1))
    if (sep <= 0 || !Number.isInteger(port)) return ws.close(1008, 'expected ?address=host:port')

    const tcp = net.connect({ host, port })
    tcp.setNoDelay(true) // the protocol is chatty; don't let Nagle delay small messages
    const pair: { ws: WebSocket; tcp: net.Socket; database?: string } = { ws, tcp }
    open.add(pair)

    // net.Socket buffers writes made before it connects, so frames arriving early are not lost.
    // ws's default binaryType is 'nodebuffer', so each frame arrives as one Buffer.
    const count = statementCounter()
    let started = false
    let awaitingReply = false // a turn begins with the first client message after the server last spoke
    ws.on('message', (data) => {
      if (!started) pair.database = startupDatabase(data as Buffer)
      started = true
      if (!awaitingReply) traffic.roundTrips++
      awaitingReply = true
      traffic.statements += count(data as Buffer)
      tcp.write(data as Buffer)
    })
    tcp.on('data', (chunk) => {
      awaitingReply = false
      if (ws.readyState === WebSocket.OPEN) ws.send(chunk, { binary: true })
    })
    // Whichever side goes first, take the other down with it so no handle outlives the pair.
    const teardown = () => {
      open.delete(pair)
      tcp.destroy()
      if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) ws.close()
    }
    tcp.on('close', teardown)
    tcp.on('error', teardown)
    ws.on('close', teardown)
    ws.on('error', teardown)
  })

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', resolve)
  })

  return {
    port: (server.address() as AddressInfo).port,
    traffic: () => ({ ...traffic }),
    /** Ends the connections (WebSocket and SQL-over-HTTP) to database `name`, so it can be dropped without killing them. */
    async endDatabase(name: string) {
      for (const pair of open) {
        if (pair.database !== name) continue
        open.delete(pair)
        pair.ws.terminate()
        pair.tcp.destroy()
      }
      for (const [url, pool] of sqlOverHttp.pools) {
        if (new URL(url).pathname.slice(1) !== name) continue
        sqlOverHttp.pools.delete(url)
        await pool.end()
      }
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        // ws 8 no longer drops live clients on close(), so end them explicitly.
        for (const { ws, tcp } of open) {
          ws.terminate()
          tcp.destroy()
        }
        open.clear()
        wss.close()
        server.closeAllConnections()
        for (const pool of sqlOverHttp.pools.values()) void pool.end()
        server.close((err) => (err ? reject(err) : resolve()))
      }),
  }
}

/** Point the (module-global) Neon driver at the local proxy, as a Worker with `NEON_LOCAL_PROXY` does. */
export function configureNeonForLocalProxy(proxyPort: number): void {
  // Node 20 has no global WebSocket; `ws` is API-compatible enough for the driver.
  neonConfig.webSocketConstructor = WebSocket as unknown as typeof globalThis.WebSocket
  useLocalNeonProxy(`127.0.0.1:${proxyPort}`)
}

/**
 * Counts the statements in the client's side of a Postgres wire conversation: simple queries ('Q') and
 * parses ('P', one per extended-protocol statement). The first message is the untyped startup message.
 */
function statementCounter() {
  let pending = Buffer.alloc(0)
  let started = false
  return (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk])
    let n = 0
    for (;;) {
      if (!started) {
        if (pending.length < 4) break
        const len = pending.readInt32BE(0)
        if (pending.length < len) break
        pending = pending.subarray(len)
        started = true
        continue
      }
      if (pending.length < 5) break
      const len = pending.readInt32BE(1)
      if (pending.length < 1 + len) break
      const type = String.fromCharCode(pending[0])
      if (type === 'Q' || type === 'P') n++
      pending = pending.subarray(1 + len)
    }
    return n
  }
}

/** The `database` parameter of a Postgres startup message (the first frame of a connection), or undefined. */
function startupDatabase(frame: Buffer): string | undefined {
  if (frame.length < 8 || frame.readInt32BE(4) !== 196608) return undefined // protocol 3.0
  const params = frame.subarray(8, frame.readInt32BE(0)).toString('utf8').split('\0')
  for (let i = 0; i + 1 < params.length; i += 2) if (params[i] === 'database') return params[i + 1]
  return undefined
}
