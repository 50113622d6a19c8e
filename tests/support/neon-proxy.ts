import net from 'node:net'
import type { AddressInfo } from 'node:net'
import { neonConfig } from '@neondatabase/serverless'
import WebSocket, { WebSocketServer } from 'ws'

/**
 * A minimal stand-in for Neon's wsproxy: the Neon driver speaks the Postgres wire protocol inside
 * WebSocket binary frames, so tests bridge each WebSocket to a plain TCP socket on the real Postgres.
 * The target comes from `?address=host:port`, which `configureNeonForLocalProxy` makes the driver send.
 */
export async function startNeonProxy(): Promise<{ port: number; close(): Promise<void> }> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 })
  const open = new Set<{ ws: WebSocket; tcp: net.Socket }>()

  wss.on('connection', (ws, req) => {
    const address = new URL(req.url ?? '/', 'ws://proxy').searchParams.get('address') ?? ''
    const sep = address.lastIndexOf(':') // lastIndexOf: tolerate IPv6 hosts
    const host = address.slice(0, sep).replace(/^\[|\]$/g, '')
    const port = Number(address.slice(sep + 1))
    if (sep <= 0 || !Number.isInteger(port)) return ws.close(1008, 'expected ?address=host:port')

    const tcp = net.connect({ host, port })
    tcp.setNoDelay(true) // the protocol is chatty; don't let Nagle delay small messages
    const pair = { ws, tcp }
    open.add(pair)

    // net.Socket buffers writes made before it connects, so frames arriving early are not lost.
    // ws's default binaryType is 'nodebuffer', so each frame arrives as one Buffer.
    ws.on('message', (data) => tcp.write(data as Buffer))
    tcp.on('data', (chunk) => {
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
    wss.once('listening', resolve)
    wss.once('error', reject)
  })

  return {
    port: (wss.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        // ws 8 no longer drops live clients on close(), so end them explicitly.
        for (const { ws, tcp } of open) {
          ws.terminate()
          tcp.destroy()
        }
        open.clear()
        wss.close((err) => (err ? reject(err) : resolve()))
      }),
  }
}

/** Point the (module-global) Neon driver at the local proxy; test-only, production keeps Neon's defaults. */
export function configureNeonForLocalProxy(proxyPort: number): void {
  // Node 20 has no global WebSocket; `ws` is API-compatible enough for the driver.
  neonConfig.webSocketConstructor = WebSocket as unknown as typeof globalThis.WebSocket
  neonConfig.wsProxy = (host, port) => `127.0.0.1:${proxyPort}/v1?address=${host}:${port}`
  neonConfig.useSecureWebSocket = false // plain ws:// to our proxy
  neonConfig.forceDisablePgSSL = true // driver default, stated explicitly: no SSLRequest to local Postgres
  neonConfig.pipelineTLS = false // only Neon's own hosts accept pipelined SSLRequest + ClientHello
  // 'password' pipelining blindly sends a cleartext password after startup; under trust/scram auth
  // Postgres would reject that stray message, so use the normal request/response handshake.
  neonConfig.pipelineConnect = false
}
