import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { listen } from '../support/loopback'

/**
 * A small Resend look-alike for tests, after https://resend.com/docs/api-reference: `POST /emails` with
 * `Authorization: Bearer <key>` answers 200 `{id}`; errors are `{statusCode, message, name}`. Requests without
 * a User-Agent are refused 403 before the API (Cloudflare error 1010). `sandboxKey` behaves like an account
 * without a verified domain: it may only send to `ownerEmail` (403 `validation_error`).
 */
export interface ResendServerOptions {
  apiKey: string
  sandboxKey?: string
  ownerEmail?: string
  /** Milliseconds to wait before answering each request, like a slow provider. */
  delayMs?: number
}

export interface SentEmail {
  id: string
  from: string
  to: string[]
  subject: string
  text?: string
  html?: string
  headers: Record<string, string | string[] | undefined>
}

export interface ResendServer {
  url: string
  sent: SentEmail[]
  close(): Promise<void>
}

const ADDRESS = /^(?:[^<>]*<)?[^\s@<>]+@[^\s@<>]+\.[^\s@<>]+>?$/

const fail = (res: ServerResponse, statusCode: number, name: string, message: string) =>
  res.writeHead(statusCode, { 'content-type': 'application/json' }).end(JSON.stringify({ statusCode, message, name }))

async function readBody(req: IncomingMessage) {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

export async function startResendServer(opts: ResendServerOptions): Promise<ResendServer> {
  const sent: SentEmail[] = []
  const server = createServer(async (req, res) => {
    if (opts.delayMs) await new Promise((r) => setTimeout(r, opts.delayMs))
    if (!req.headers['user-agent']) return res.writeHead(403, { 'content-type': 'text/plain' }).end('error code: 1010')
    if (req.url !== '/emails') return fail(res, 404, 'not_found', 'The requested endpoint does not exist.')
    if (req.method !== 'POST') return fail(res, 405, 'method_not_allowed', 'Method is not allowed for the requested path.')
    const auth = req.headers.authorization
    if (!auth?.startsWith('Bearer ')) return fail(res, 401, 'missing_api_key', 'Missing API key in the authorization header.')
    const key = auth.slice('Bearer '.length)
    if (key !== opts.apiKey && key !== opts.sandboxKey) return fail(res, 403, 'invalid_api_key', 'API key is invalid.')
    let body: Record<string, unknown>
    try {
      body = JSON.parse(await readBody(req))
    } catch {
      return fail(res, 400, 'validation_error', 'Invalid JSON body.')
    }
    for (const field of ['from', 'to', 'subject']) {
      if (body[field] === undefined) return fail(res, 422, 'missing_required_field', `Missing \`${field}\` field.`)
    }
    const to = Array.isArray(body.to) ? body.to : [body.to]
    if (typeof body.from !== 'string' || !ADDRESS.test(body.from)) {
      return fail(res, 422, 'validation_error', 'Invalid `from` field. The email address needs to follow the `email@example.com` or `Name <email@example.com>` format.')
    }
    if (to.length === 0 || to.length > 50 || !to.every((t) => typeof t === 'string' && ADDRESS.test(t))) {
      return fail(res, 422, 'validation_error', 'Invalid `to` field.')
    }
    if (typeof body.text !== 'string' && typeof body.html !== 'string') {
      return fail(res, 422, 'validation_error', 'Either `html` or `text` must be provided.')
    }
    if (key === opts.sandboxKey && !to.every((t) => t === opts.ownerEmail)) {
      return fail(res, 403, 'validation_error', `You can only send testing emails to your own email address (${opts.ownerEmail}).`)
    }
    const id = crypto.randomUUID()
    sent.push({
      id,
      from: body.from,
      to: to as string[],
      subject: String(body.subject),
      text: body.text as string | undefined,
      html: body.html as string | undefined,
      headers: req.headers,
    })
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id }))
  })
  const { url, close } = await listen(server)
  return { url, sent, close }
}
