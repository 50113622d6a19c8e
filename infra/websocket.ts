import { type ServerType, serve, upgradeWebSocket } from '@hono/node-server'
import { type IncomingMessage, STATUS_CODES } from 'node:http'
import { WebSocketServer } from 'ws'
import type { Services } from '../lib/context'
import { permissionHub } from '../functions/permissions/hub'

/** The largest frame a client may send; `ws` closes a socket that sends more (1009), that socket alone. */
const MAX_FRAME_BYTES = 64 * 1024
/** How long a closing socket may take to answer the close frame before it is cut. */
const CLOSE_GRACE_MS = 1000

type Fetch = Parameters<typeof serve>[0]['fetch']

/**
 * An upgrade the app refuses (401 without a session, 403 for a foreign Origin, 429, …) is answered as any other
 * request: status, headers and the JSON error body, then the connection closes. Upgrades arrive with no `outgoing`
 * response object, only the socket.
 */
function answerRefusedUpgrades(fetch: Fetch): Fetch {
  return async (req, env) => {
    const upgradeEnv = env as ({ incoming?: IncomingMessage; outgoing?: unknown } & object) | undefined
    const upgrade = req.headers.get('upgrade')?.toLowerCase() === 'websocket' && !!upgradeEnv?.incoming && !upgradeEnv.outgoing
    // The upgrader marks an accepted upgrade by a symbol it adds to `env` (its own, not exported): one more than before.
    const marks = upgrade ? Object.getOwnPropertySymbols(upgradeEnv).length : 0
    const res = (await fetch(req, env)) as Response
    const accepted = upgrade && Object.getOwnPropertySymbols(upgradeEnv).length > marks
    const socket = upgradeEnv?.incoming?.socket
    if (upgrade && !accepted && socket && !socket.destroyed) {
      const body = Buffer.from(await res.clone().arrayBuffer())
      const lines = [`HTTP/1.1 ${res.status} ${STATUS_CODES[res.status] ?? ''}`, 'Connection: close', `Content-Length: ${body.length}`]
      res.headers.forEach((value, name) => {
        if (name !== 'content-length' && name !== 'connection' && name !== 'transfer-encoding') lines.push(`${name}: ${value}`)
      })
      socket.end(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), body]))
    }
    return res
  }
}

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
  const server = serve({ ...options, fetch: answerRefusedUpgrades(options.fetch), websocket: { server: wss } })
  // @hono/node-server answers a refused upgrade itself, headers only, unless another upgrade listener exists:
  // this one, so that answerRefusedUpgrades writes the refusal with its JSON body.
  server.on('upgrade', () => {})
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
