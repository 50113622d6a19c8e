import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { Redis } from 'ioredis'
import { listen } from './loopback'

/**
 * Minimal Upstash-REST-compatible front for a real Redis, for tests only, after Upstash's documented REST API in
 * its JSON form: POST / (one command as a JSON array), POST /pipeline and POST /multi-exec (arrays of commands),
 * `Authorization: Bearer <token>` (401 otherwise), `{ result }` answers, `{ error }` with 400 for a command Redis
 * refused, `Upstash-Encoding: base64` (every string of the answer base64, except `OK`), and the read-your-writes
 * token: each answer carries a new `upstash-sync-token`, and what each request carried is recorded (`syncTokens`).
 * Not implemented: commands in the URL path (`/set/foo/bar`), which nothing here sends.
 */
export interface UpstashRestServer {
  url: string
  token: string
  /** HTTP requests received so far (round trips). */
  readonly requests: number
  /** Called once per HTTP request, before it is executed. */
  onRequest?: (path: string, body: unknown) => void
  /** The `upstash-sync-token` each request carried (empty when it carried none), in order. */
  readonly syncTokens: string[]
  close(): Promise<void>
}

type Reply = { result: unknown } | { error: string }

// Commands that would change the shared connection's state for every other caller.
const STATEFUL = new Set(['select', 'multi', 'exec', 'discard', 'watch', 'unwatch', 'hello', 'quit', 'subscribe', 'psubscribe', 'monitor'])

export async function startUpstashRestServer(opts: { redisUrl: string; token?: string; db?: number }): Promise<UpstashRestServer> {
  const token = opts.token ?? randomUUID()
  // RESP2 like Upstash: under RESP3 (ioredis 6's default) Lua `false` comes back as 0, not null.
  const redis = new Redis(opts.redisUrl, { db: opts.db ?? 0, protocol: 2, lazyConnect: true, maxRetriesPerRequest: 1 })
  await redis.connect()

  /** Replies arrive as Buffers (callBuffer) so binary values survive; strings are base64 when asked, `OK` never. */
  function encode(v: unknown, base64: boolean): unknown {
    if (Buffer.isBuffer(v)) return base64 && v.toString('utf8') !== 'OK' ? v.toString('base64') : v.toString('utf8')
    if (Array.isArray(v)) return v.map((x) => encode(x, base64))
    if (v instanceof Error) return v.message // error nested in an EVAL/array reply
    return v // integer or null
  }

  const toReply = (err: Error | null, res: unknown, base64: boolean): Reply => (err ? { error: err.message } : { result: encode(res, base64) })

  function parseCommand(c: unknown): string[] {
    if (!Array.isArray(c) || c.length === 0) throw new Error('ERR command must be a non-empty JSON array')
    const args = c.map((a) => (typeof a === 'string' ? a : String(a))) // client sends strings, numbers, booleans
    if (STATEFUL.has(args[0].toLowerCase())) throw new Error(`ERR Command is not available: '${args[0]}'`)
    return args
  }

  async function single(body: unknown, base64: boolean): Promise<Reply> {
    const args = parseCommand(body)
    try {
      return toReply(null, await redis.callBuffer(args[0], ...args.slice(1)), base64)
    } catch (e) {
      return toReply(e as Error, null, base64)
    }
  }

  async function batch(body: unknown, base64: boolean, atomic: boolean): Promise<Reply[] | Reply> {
    if (!Array.isArray(body) || body.length === 0) throw new Error('ERR pipeline must be a non-empty array of commands')
    const cmds = body.map(parseCommand)
    const p = atomic ? redis.multi() : redis.pipeline()
    for (const args of cmds) p.callBuffer(args[0], ...args.slice(1))
    let results: [Error | null, unknown][] | null
    try {
      results = await p.exec()
    } catch (e) {
      return { error: (e as Error).message } // EXECABORT: a command failed to queue
    }
    if (!results) return { error: 'EXECABORT Transaction discarded' }
    return results.map(([err, res]) => toReply(err, res, base64))
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const send = (status: number, payload: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'upstash-sync-token': String(++lastSyncToken) }).end(JSON.stringify(payload))
    }
    if (req.headers.authorization !== `Bearer ${token}`) return send(401, { error: 'Unauthorized' })
    const path = (req.url ?? '/').split('?')[0].replace(/\/+$/, '') || '/'
    if (req.method !== 'POST' || !['/', '/pipeline', '/multi-exec'].includes(path)) return send(404, { error: 'Not found' })
    const base64 = String(req.headers['upstash-encoding'] ?? '').toLowerCase() === 'base64'
    syncTokens.push(String(req.headers['upstash-sync-token'] ?? ''))
    try {
      const chunks: Buffer[] = []
      for await (const c of req) chunks.push(c as Buffer)
      const body: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      server.onRequest?.(path, body)
      const out = path === '/' ? await single(body, base64) : await batch(body, base64, path === '/multi-exec')
      // Upstash answers a failed single command (or aborted transaction) with 400 + {error}.
      send(!Array.isArray(out) && 'error' in out ? 400 : 200, out)
    } catch (e) {
      send(400, { error: (e as Error).message })
    }
  }

  let requests = 0
  let lastSyncToken = 0
  const syncTokens: string[] = []
  const http = createServer((req, res) => {
    requests++
    handle(req, res).catch((e) => res.writeHead(500).end(JSON.stringify({ error: String(e) })))
  })
  const loopback = await listen(http)

  const server: UpstashRestServer = {
    url: loopback.url,
    token,
    get requests() {
      return requests
    },
    syncTokens,
    async close() {
      await loopback.close() // drops the client's idle keep-alive sockets too
      await redis.quit()
    },
  }
  return server
}
