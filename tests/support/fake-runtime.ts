import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { listen } from './loopback'

/**
 * A fake agent runtime for probe and gateway tests: a real HTTP server on loopback whose answer on each path the
 * test sets (status, body, delay, or a misbehaviour; or a list of them, one per request). Unset paths answer 404,
 * like a runtime without legacy probes.
 */
export type FakeAnswer =
  /** `after`: answers once it settles (a test holds requests in flight, then lets them go). */
  | { status?: number; body?: unknown; raw?: string; delayMs?: number; after?: Promise<unknown> }
  /** Never answers (until the server closes). */
  | { hang: true }
  /** Sends the headers and part of the body, then destroys the socket. */
  | { cutOff: true }
  /** Destroys the socket before any answer. */
  | { destroy: true }

export interface FakeRuntime {
  url: string
  /** The answer on `path`; a list is answered in order, its last entry repeating. */
  set(path: string, answer: FakeAnswer | FakeAnswer[] | undefined): void
  /** Requests received, by path. */
  hits: Map<string, number>
  /** Request bodies received (as text), by path, in order. */
  bodies: Map<string, string[]>
  close(): Promise<void>
}

export async function startFakeRuntime(answers: Record<string, FakeAnswer | FakeAnswer[]> = {}): Promise<FakeRuntime> {
  const table = new Map(Object.entries(answers).map(([path, a]) => [path, Array.isArray(a) ? [...a] : a]))
  const hits = new Map<string, number>()
  const bodies = new Map<string, string[]>()
  const timers = new Set<ReturnType<typeof setTimeout>>()
  const next = (path: string) => {
    const entry = table.get(path)
    return Array.isArray(entry) ? (entry.length > 1 ? entry.shift() : entry[0]) : entry
  }
  // The body is read whole before answering, so `bodies` holds it once the caller has its answer.
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => respond(req, res, Buffer.concat(chunks).toString('utf8')))
  })
  function respond(req: IncomingMessage, res: ServerResponse, body: string) {
    const path = new URL(req.url ?? '/', 'http://x').pathname
    hits.set(path, (hits.get(path) ?? 0) + 1)
    bodies.set(path, [...(bodies.get(path) ?? []), body])
    const answer = next(path)
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
    const later = () => {
      if (!answer.delayMs) return send()
      const t = setTimeout(() => (timers.delete(t), send()), answer.delayMs)
      timers.add(t)
    }
    if (answer.after) void answer.after.then(later, later)
    else later()
  }
  const { url, close } = await listen(server)
  return {
    url,
    set: (path, answer) => (answer ? table.set(path, Array.isArray(answer) ? [...answer] : answer) : table.delete(path)),
    hits,
    bodies,
    close: () => {
      for (const t of timers) clearTimeout(t)
      return close()
    },
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
