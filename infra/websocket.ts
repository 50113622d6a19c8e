import { type ServerType, serve, upgradeWebSocket } from '@hono/node-server'
import { WebSocketServer } from 'ws'
import type { Services } from '../lib/context'
import { permissionHub } from '../functions/permissions/hub'

/** The largest frame a client may send; `ws` closes a socket that sends more (1009), that socket alone. */
const MAX_FRAME_BYTES = 64 * 1024
/** How long a closing socket may take to answer the close frame before it is cut. */
const CLOSE_GRACE_MS = 1000

export interface SocketServer {
  server: ServerType
  /** Closes every open WebSocket (1001 Going Away), so the listener's close does not wait on them. */
  closeSockets(): Promise<void>
}

/**
 * The web listener with WebSocket upgrades (the permission socket, `GET /api/permissions/socket`). An upgrade goes
 * through the app like any request (request log, session, limits, the route); the route accepts it through the
 * permission hub of `services`, which this hands @hono/node-server's upgrader. Other requests are plain HTTP.
 */
export function serveWithSockets(options: Parameters<typeof serve>[0], services: Services): SocketServer {
  permissionHub(services).acceptUpgradesWith(upgradeWebSocket)
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES })
  const server = serve({ ...options, websocket: { server: wss } })
  return {
    server,
    async closeSockets() {
      await Promise.all(
        [...wss.clients].map(
          (ws) =>
            new Promise<void>((resolve) => {
              const cut = setTimeout(() => ws.terminate(), CLOSE_GRACE_MS)
              ws.once('close', () => {
                clearTimeout(cut)
                resolve()
              })
              ws.close(1001, 'Server shutting down')
            }),
        ),
      )
    },
  }
}
