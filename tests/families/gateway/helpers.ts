import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { eq } from 'drizzle-orm'
import type { Hex, LocalAccount } from 'viem'
import { base64url } from 'jose'
import { createWebApp } from '../../../functions/web'
import type { Config } from '../../../lib/config'
import type { Services } from '../../../lib/context'
import { users } from '../../../schema'
import { BROWSER, type Harness, type SeededUser } from '../../support/harness'
import { listen } from '../../support/loopback'
import { freshIp } from '../../support/requests'
import { mppMemo, mppSecret, type PaymentChain } from '../../support/payment-chain'

/** What a plugin upstream does with the next calls to it (tests switch it per plugin id). */
export type Behaviour =
  | 'auto' // an event stream when asked for one, else JSON echoing what it received
  | 'json'
  | 'audio' // audio/mpeg bytes
  | 'teapot' // 418 with a JSON body of its own
  | 'own402' // 402 with a JSON body of its own: a status the gateway answers with too
  | 'fail' // 500
  | 'stall' // one event, then nothing, never ends
  | 'gated' // one event, then the rest only once `release()` is called
  | 'redirect'
  | 'huge' // 11 MB of JSON
  | 'empty' // 204

export interface Received {
  path: string
  headers: IncomingMessage['headers']
  body: unknown
}

export const AUDIO = Uint8Array.from({ length: 4096 }, (_, i) => (i * 31) & 255)

/**
 * Real loopback upstreams for the gateway's plugins: `/<pluginId>` answers as `behave(id, ...)` says. Records what
 * each call received. `gated` holds its stream open until `release()`: a test proves the first event reached the
 * client before the last one was sent.
 */
export async function startPluginServer() {
  const behaviours = new Map<string, Behaviour>()
  const received: Received[] = []
  let gate: (() => void) | null = null
  let gateOpened: Promise<void> = Promise.resolve()

  function handle(req: IncomingMessage, res: ServerResponse, raw: string) {
    const id = (req.url ?? '/').slice(1)
    let body: unknown = null
    try {
      body = JSON.parse(raw)
    } catch {
      body = raw
    }
    received.push({ path: req.url ?? '/', headers: req.headers, body })
    const mode = behaviours.get(id) ?? 'auto'
    const wantsStream = /text\/event-stream/.test(req.headers.accept ?? '')
    switch (mode === 'auto' ? (wantsStream ? 'stream' : 'json') : mode) {
      case 'json':
        return json(res, 200, { plugin: id, received: body })
      case 'stream':
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
        res.write('data: {"n":1}\n\n')
        res.write('data: {"n":2}\n\n')
        return res.end('data: [DONE]\n\n')
      case 'audio':
        res.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': String(AUDIO.byteLength) })
        return res.end(Buffer.from(AUDIO))
      case 'teapot':
        return json(res, 418, { error: 'short and stout' })
      case 'own402':
        return json(res, 402, { error: 'the plugin asks for its own payment' })
      case 'fail':
        return json(res, 500, { error: 'plugin crashed' })
      case 'stall':
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        return res.write('data: {"n":1}\n\n')
      case 'gated':
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        res.write('data: first\n\n')
        gateOpened.then(() => res.end('data: last\n\n'))
        return
      case 'redirect':
        res.writeHead(302, { location: 'http://127.0.0.1:9/elsewhere' })
        return res.end()
      case 'huge':
        res.writeHead(200, { 'content-type': 'application/json' })
        return res.end(`{"x":"${'a'.repeat(11 * 1024 * 1024)}"}`)
      case 'empty':
        res.writeHead(204)
        return res.end()
    }
  }

  const server = createServer((req, res) => {
    let raw = ''
    req.setEncoding('utf8')
    req.on('data', (c: string) => (raw += c))
    req.on('end', () => handle(req, res, raw))
  })
  const { url, close } = await listen(server)
  return {
    url,
    received,
    behave(id: string, mode: Behaviour) {
      behaviours.set(id, mode)
      if (mode === 'gated') gateOpened = new Promise((r) => (gate = r))
    },
    reset() {
      behaviours.clear()
      received.length = 0
    },
    /** Lets a `gated` stream send its last event and end. */
    release() {
      gate?.()
    },
    close() {
      gate?.()
      return close()
    },
  }
}

export type PluginServer = Awaited<ReturnType<typeof startPluginServer>>

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify(body))
}

/** `GATEWAY_PLUGINS` pointing every plugin at `server` (`/<id>`), with per-plugin overrides. */
export function pluginsEnv(server: { url: string } | null, over: Record<string, Record<string, unknown>> = {}) {
  const ids = ['agent', 'generate-text', 'tts', 'stt']
  const plugins = Object.fromEntries(ids.map((id) => [id, { ...(server && { url: `${server.url}/${id}` }), ...over[id] }]))
  return { GATEWAY_PLUGINS: JSON.stringify(plugins), GATEWAY_UPSTREAM_TIMEOUT_MS: '400' }
}

/**
 * `POST /api/v1/gateway` as a client sends it: JSON, a fresh client address (so only the rate-limit test shares a
 * counter), the user's cookie and the dashboard origin when `user` is given.
 */
export function gateway(
  h: Harness,
  opts: { body?: unknown; headers?: Record<string, string>; user?: SeededUser; ip?: string; app?: Pick<Harness['web'], 'request'> } = {},
) {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': BROWSER['user-agent'], 'cf-connecting-ip': opts.ip ?? freshIp() }
  if (opts.user) Object.assign(headers, { cookie: opts.user.cookie, origin: BROWSER.origin })
  Object.assign(headers, opts.headers)
  const body = opts.body === undefined ? '{}' : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body)
  return (opts.app ?? h.web).request('/api/v1/gateway', { method: 'POST', headers, body })
}

/** Gives `user` a paid plan (or takes it away with `null`). */
export async function setPlan(h: Harness, user: SeededUser, plan: string | null, status = 'active') {
  await h.db.update(users).set({ plan, subscriptionStatus: plan ? status : 'inactive' }).where(eq(users.id, user.id))
}

/** The auth-params of a `WWW-Authenticate: Payment …` value. */
export function challengeParams(header: string): Record<string, string> {
  const params: Record<string, string> = {}
  for (const m of header.replace(/^Payment\s+/i, '').matchAll(/([a-z]+)="((?:[^"\\]|\\.)*)"/gi)) params[m[1].toLowerCase()] = m[2].replace(/\\(.)/g, '$1')
  return params
}

/**
 * An `Authorization` value as an mppx client builds it (`Credential.serialize`): base64url JSON of the challenge it
 * answers (from `WWW-Authenticate`, its `request` still encoded) and the payload `{type: 'hash', hash, secret}`,
 * `secret` the payer's own (the preimage of the memo's commitment; a fresh random one when not given).
 */
export function credential(challenge: Record<string, string> | { id: string }, hash: string, secret: Hex = mppSecret()) {
  const { amount: _a, currency: _c, recipient: _r, nonce: _n, ...mppx } = challenge as Record<string, string>
  return `Payment ${base64url.encode(JSON.stringify({ challenge: mppx, payload: { type: 'hash', hash, secret } }))}`
}

/** A 402's challenge: the body's `mpp` part and the header's params. */
export async function challengeOf(res: Response) {
  const body = (await res.json()) as {
    mpp: { nonce: string; id: string; request: string; amount: string; recipient: string; token: string; expiresAt: string }
  }
  return { mpp: body.mpp, params: challengeParams(res.headers.get('www-authenticate') ?? ''), body }
}

/** Asks for a 402 challenge for `pluginId` as an anonymous MPP caller. */
export async function askChallenge(h: Harness, opts: { plugin?: string; app?: Pick<Harness['web'], 'request'> } = {}) {
  const res = await gateway(h, { app: opts.app, headers: { 'x-payment-method': 'mpp', ...(opts.plugin && { 'x-plugin-id': opts.plugin }) } })
  if (res.status !== 402) throw new Error(`expected a 402 challenge, got ${res.status}`)
  return challengeOf(res)
}

/**
 * Asks for a challenge for `pluginId` (as an anonymous MPP caller), pays it from `payer` as an MPP client does (a
 * secret of its own, the memo `keccak256(id ‖ secret)` appended to the transfer; `memo` overrides it, `null` sends
 * none), and builds the credential.
 */
export async function payChallenge(
  h: Harness,
  chain: PaymentChain,
  payer: LocalAccount,
  opts: { plugin?: string; amount?: string; memo?: Hex | null; to?: Hex; token?: Hex; app?: Pick<Harness['web'], 'request'> } = {},
) {
  const { mpp, params } = await askChallenge(h, opts)
  const secret = mppSecret()
  const memo = opts.memo === null ? undefined : (opts.memo ?? mppMemo(params.id, secret))
  const hash = await chain.pay(payer, { amount: opts.amount ?? mpp.amount, memo, to: opts.to, token: opts.token })
  return { nonce: mpp.nonce, id: params.id, secret, hash, authorization: credential(params, hash, secret), params }
}

/**
 * The web app on the harness's stores with `over` on top of its configuration: one harness per file serves the
 * variants (a chain that is down, no Stripe, a bad GATEWAY_PLUGINS) without new databases.
 */
export function webAppWith(h: Harness, over: Partial<Config>, services: Partial<Services> = {}) {
  const config = { ...h.services.config, ...over } as Config
  const varied = Object.create(h.services, Object.fromEntries(Object.entries({ config, ...services }).map(([k, value]) => [k, { value }]))) as Services
  return createWebApp(() => varied)
}
