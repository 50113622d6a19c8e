import { createAdaptorServer } from '@hono/node-server'
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net'

/** A server listening on the loopback interface: its base URL and port, and a way to stop it. */
export interface Loopback {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  url: string
  port: number
  /** Ends every open connection (idle keep-alive ones included, so nothing waits on them) and stops listening. */
  close(): Promise<void>
}

/**
 * Starts `server` (an `http` or `net` server, not yet listening) on a free loopback port. Connections are tracked so
 * `close()` never waits for a client's keep-alive socket.
 */
export async function listen(server: Server): Promise<Loopback> {
  const sockets = new Set<Socket>()
  server.on('connection', (s: Socket) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject)
      resolve()
    })
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  }
}

/** A fetch handler (a Hono app's `fetch`) served over a real socket on a free loopback port. */
export const serveFetch = (fetch: (req: Request) => Response | Promise<Response>) => listen(createAdaptorServer({ fetch }) as Server)

/**
 * A loopback port nothing listens on (bound, then released): connections to it are refused at once. For an
 * upstream that is down, or a port to start a server of our own on.
 */
export async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/** `http://127.0.0.1:<closedPort()>`: a base URL where nothing answers. */
export const closedUrl = async () => `http://127.0.0.1:${await closedPort()}`
