import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A fake agent runtime for probe tests: a real HTTP server on loopback whose answer on each path the test
 * sets (status, body, delay, or a misbehaviour). Unset paths answer 404, like a runtime without legacy probes.
 */
export type FakeAnswer =
  | { status?: number; body?: unknown; raw?: string; delayMs?: number }
  /** Never answers (until the server closes). */
  | { hang: true }
  /** Sends the headers and part of the body, then destroys the socket. */
  | { cutOff: true }
  /** Destroys the socket before any answer. */
  | { destroy: true }

export interface FakeRuntime {
  url: string
  set(path: string, answer: FakeAnswer | undefined): void
  /** Requests received, by path. */
  hits: Map<string, number>
  close(): Promise<void>
}

export async function startFakeRuntime(answers: Record<string, FakeAnswer> = {}): Promise<FakeRuntime> {
  const table = new Map(Object.entries(answers))
  const hits = new Map<string, number>()
  const timers = new Set<ReturnType<typeof setTimeout>>()
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname
    hits.set(path, (hits.get(path) ?? 0) + 1)
    const answer = table.get(path)
    if (!answer) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found')
      return
    }
    if ('hang' in answer) return
    if ('destroy' in answer) return void req.socket.destroy()
    if ('cutOff' in answer) {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '200' })
      res.write('{"configured": true, "runn')
      const t = setTimeout(() => (timers.delete(t), req.socket.destroy()), 20)
      timers.add(t)
      return
    }
    const send = () => {
      const text = answer.raw ?? JSON.stringify(answer.body ?? {})
      res.writeHead(answer.status ?? 200, { 'content-type': answer.raw === undefined ? 'application/json' : 'text/plain' }).end(text)
    }
    if (answer.delayMs) {
      const t = setTimeout(() => (timers.delete(t), send()), answer.delayMs)
      timers.add(t)
    } else send()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    set: (path, answer) => (answer ? table.set(path, answer) : table.delete(path)),
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t)
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** The documented answers of a healthy runtime. */
export const HEALTHY = {
  healthz: { body: { ok: true, status: 'live', version: '2.4.0' } },
  readyz: { body: { ready: true, failing: [], uptimeMs: 60_000 } },
  status: (over: Record<string, unknown> = {}) => ({
    body: { configured: true, running: true, state: 'running', version: '2.4.1', uptime: '1m 0s', runtime: { ffmpeg: { available: true, version: '6.1.1' } }, ...over },
  }),
}
