import { createHash, randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { Redis } from 'ioredis'
import { listen } from './loopback'

/**
 * Minimal Upstash-REST-compatible front for a real Redis, for tests only.
 * Implements what @upstash/redis 1.x sends: POST / (one command), POST /pipeline and
 * POST /multi-exec (command arrays), Bearer auth, and `Upstash-Encoding: base64`
 * (which the client sends by default).
 */
export interface UpstashRestServer {
  url: string
  token: string
  /** HTTP requests received so far (round trips). */
  readonly requests: number
  /** Called once per HTTP request, before it is executed. */
  onRequest?: (path: string, body: unknown) => void
  close(): Promise<void>
}

type Reply = { result: unknown } | { error: string }

// Commands that would change the shared connection's state for every other caller.
const STATEFUL = new Set(['select', 'multi', 'exec', 'discard', 'watch', 'unwatch', 'hello', 'quit', 'subscribe', 'psubscribe', 'monitor'])

const sha1 = (s: string) => createHash('sha1').update(s, 'utf8').digest('hex')

/**
 * Upstash scripts start with `#!lua flags=allow-key-locking`, an Upstash-only flag Redis 7.0
 * rejects. Blank the shebang (keeping the newline so Lua error line numbers still match).
 */
const stripShebang = (script: string) => (script.startsWith('#!') ? script.replace(/^[^\n]*/, '') : script)

export async function startUpstashRestServer(opts: { redisUrl: string; token?: string; db?: number }): Promise<UpstashRestServer> {
  const token = opts.token ?? randomUUID()
  // RESP2 like Upstash: under RESP3 (ioredis 6's default) Lua `false` comes back as 0, not null.
  const redis = new Redis(opts.redisUrl, { db: opts.db ?? 0, protocol: 2, lazyConnect: true, maxRetriesPerRequest: 1 })
  await redis.connect()

  // The client EVALSHAs the sha of the ORIGINAL script; Redis only knows the stripped one.
  const shas = new Map<string, string>()

  /** Rewrites script commands; returns the command to send and a fix-up for its reply. */
  function prepare(cmd: string[]): { args: string[]; fix?: (r: unknown) => unknown } {
    const [name, ...rest] = cmd
    const lower = name.toLowerCase()
    if ((lower === 'eval' || lower === 'eval_ro') && rest[0]?.startsWith('#!')) {
      const stripped = stripShebang(rest[0])
      shas.set(sha1(rest[0]), sha1(stripped))
      return { args: [name, stripped, ...rest.slice(1)] }
    }
    if ((lower === 'evalsha' || lower === 'evalsha_ro') && rest[0] !== undefined) {
      return { args: [name, shas.get(rest[0].toLowerCase()) ?? rest[0], ...rest.slice(1)] }
    }
    if (lower === 'script' && rest[0]?.toLowerCase() === 'load' && rest[1]?.startsWith('#!')) {
      const original = sha1(rest[1])
      shas.set(original, sha1(stripShebang(rest[1])))
      return { args: [name, rest[0], stripShebang(rest[1])], fix: () => Buffer.from(original) }
    }
    if (lower === 'script' && rest[0]?.toLowerCase() === 'exists') {
      return { args: [name, rest[0], ...rest.slice(1).map((s) => shas.get(s.toLowerCase()) ?? s)] }
    }
    return { args: cmd }
  }

  /** Replies arrive as Buffers (callBuffer) so binary values survive; strings are base64 when asked. */
  function encode(v: unknown, base64: boolean): unknown {
    if (Buffer.isBuffer(v)) return v.toString(base64 ? 'base64' : 'utf8')
    if (Array.isArray(v)) return v.map((x) => encode(x, base64))
    if (v instanceof Error) return v.message // error nested in an EVAL/array reply
    return v // integer or null
  }

  const toReply = (err: Error | null, res: unknown, base64: boolean, fix?: (r: unknown) => unknown): Reply =>
    err ? { error: err.message } : { result: encode(fix ? fix(res) : res, base64) }

  function parseCommand(c: unknown): string[] {
    if (!Array.isArray(c) || c.length === 0) throw new Error('ERR command must be a non-empty JSON array')
    const args = c.map((a) => (typeof a === 'string' ? a : String(a))) // client sends strings, numbers, booleans
    if (STATEFUL.has(args[0].toLowerCase())) throw new Error(`ERR Command is not available: '${args[0]}'`)
    return args
  }

  async function single(body: unknown, base64: boolean): Promise<Reply> {
    const { args, fix } = prepare(parseCommand(body))
    try {
      return toReply(null, await redis.callBuffer(args[0], ...args.slice(1)), base64, fix)
    } catch (e) {
      return toReply(e as Error, null, base64)
    }
  }

  async function batch(body: unknown, base64: boolean, atomic: boolean): Promise<Reply[] | Reply> {
    if (!Array.isArray(body) || body.length === 0) throw new Error('ERR pipeline must be a non-empty array of commands')
    const cmds = body.map((c) => prepare(parseCommand(c)))
    const p = atomic ? redis.multi() : redis.pipeline()
    for (const { args } of cmds) p.callBuffer(args[0], ...args.slice(1))
    let results: [Error | null, unknown][] | null
    try {
      results = await p.exec()
    } catch (e) {
      return { error: (e as Error).message } // EXECABORT: a command failed to queue
    }
    if (!results) return { error: 'EXECABORT Transaction discarded' }
    return results.map(([err, res], i) => toReply(err, res, base64, cmds[i].fix))
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const send = (status: number, payload: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload))
    }
    if (req.headers.authorization !== `Bearer ${token}`) return send(401, { error: 'Unauthorized' })
    const path = (req.url ?? '/').split('?')[0].replace(/\/+$/, '') || '/'
    if (req.method !== 'POST' || !['/', '/pipeline', '/multi-exec'].includes(path)) return send(404, { error: 'Not found' })
    const base64 = String(req.headers['upstash-encoding'] ?? '').toLowerCase() === 'base64'
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
    async close() {
      await loopback.close() // drops the client's idle keep-alive sockets too
      await redis.quit()
    },
  }
  return server
}
