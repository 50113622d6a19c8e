import type { AddressInfo } from 'node:net'
import { once } from 'node:events'
import { eq } from 'drizzle-orm'
import WebSocket from 'ws'
import { serveWithSockets, type SocketServer } from '../../../infra/websocket'
import { PERMISSION_EXPIRY_PATH } from '../../../functions/permissions/requests'
import { signDelivery } from '../../../lib/queue/sign'
import { permissionRequests } from '../../../schema'
import { BROWSER, createHarness, type Harness, type SeededUser } from '../../support/harness'

export const INTERNAL_KEY = 'test-internal-key-0123456789'
/** The queue's signing key in these harnesses: a test signs the expiry job's deliveries itself. */
export const QUEUE_KEY = 'permissions-queue-key'
export const EXPIRY_URL = `http://127.0.0.1:8787${PERMISSION_EXPIRY_PATH}`
/** A request's time to live: 10 minutes from its creation. */
export const TTL_MS = 10 * 60_000

/** A harness whose deployment has an internal key (the hook's) and a queue signing key. */
export const permissionsHarness = (env: Record<string, string | undefined> = {}) =>
  createHarness({ env: { INTERNAL_API_KEY: INTERNAL_KEY, QSTASH_CURRENT_SIGNING_KEY: QUEUE_KEY, ...env } })

/** A signed delivery of a request's expiry job (`POST /api/queue/permission-expiry`), as the queue makes it. */
export async function expiryDelivery(h: Pick<Harness, 'web'>, body: unknown, key: string | null = QUEUE_KEY) {
  const text = typeof body === 'string' ? body : JSON.stringify(body)
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (key !== null) headers['upstash-signature'] = await signDelivery(key, EXPIRY_URL, text)
  return h.web.request(EXPIRY_URL, { method: 'POST', headers, body: text })
}

/** `POST /api/hooks/classify` as an agent runtime calls it (the internal key unless `key` says otherwise; null: none). */
export function hook(h: Pick<Harness, 'web'>, body: unknown, key: string | null = INTERNAL_KEY) {
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (key !== null) headers.authorization = `Bearer ${key}`
  return h.web.request('/api/hooks/classify', { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) })
}

/** `GET /api/hooks/permissions/:id`, the hook's poll. */
export function poll(h: Pick<Harness, 'web'>, requestId: string, key: string | null = INTERNAL_KEY) {
  return h.web.request(`/api/hooks/permissions/${encodeURIComponent(requestId)}`, { headers: key === null ? {} : { authorization: `Bearer ${key}` } })
}

/** A dangerous call (an unknown tool) for `userId`; answers its `requestId`. */
export async function dangerousCall(h: Harness, userId: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await hook(h, { toolName: 'frobnicate', toolInput: { level: 11 }, userId, ...extra })
  const body = (await res.json()) as { requestId?: string; tier: string }
  if (res.status !== 200 || body.tier !== 'dangerous' || !body.requestId) throw new Error(`expected a dangerous call: ${res.status} ${JSON.stringify(body)}`)
  return body.requestId
}

/** The stored row of a request, as the tests see every row. */
export async function storedRequest(h: Harness, requestId: string) {
  const [row] = await h.db.select().from(permissionRequests).where(eq(permissionRequests.id, requestId))
  return row
}

/** The harness's web app on a real Node listener with WebSockets, on a free port. */
export async function listen(h: Harness): Promise<SocketServer & { url: string; close(): Promise<void> }> {
  const listener = serveWithSockets({ fetch: h.web.fetch, port: 0, hostname: '127.0.0.1' }, h.services)
  if (!listener.server.listening) await once(listener.server, 'listening')
  const { port } = listener.server.address() as AddressInfo
  return {
    ...listener,
    url: `ws://127.0.0.1:${port}`,
    async close() {
      await listener.closeSockets()
      await new Promise((r) => listener.server.close(r))
    },
  }
}

export type Message = Record<string, unknown> & { type: string }

/** A dashboard's socket: every message it received, and a way to wait for the next one that matches. */
export interface Dashboard {
  ws: WebSocket
  received: Message[]
  next(match?: (m: Message) => boolean, timeoutMs?: number): Promise<Message>
  send(message: unknown): void
  close(): Promise<void>
  /** Resolves with the close code and reason once the socket has closed (by either side). */
  closed: Promise<{ code: number; reason: string }>
}

/**
 * Opens `GET /api/permissions/socket` as the dashboard does (the user's cookie, the dashboard's Origin). Resolves
 * once open; rejects with the HTTP status when the upgrade is refused.
 */
export function openDashboard(url: string, user: SeededUser | null, headers: Record<string, string> = {}): Promise<Dashboard> {
  const ws = new WebSocket(`${url}/api/permissions/socket`, {
    headers: { origin: BROWSER.origin, 'user-agent': BROWSER['user-agent'], ...(user ? { cookie: user.cookie } : {}), ...headers },
  })
  const received: Message[] = []
  let seen = 0
  const waiters: Array<() => void> = []
  ws.on('message', (data) => {
    received.push(JSON.parse(String(data)) as Message)
    for (const w of waiters.splice(0)) w()
  })
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.once('close', (code: number, reason: Buffer) => resolve({ code, reason: reason.toString() })),
  )
  const dashboard: Dashboard = {
    ws,
    received,
    closed,
    async next(match = () => true, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        while (seen < received.length) {
          const m = received[seen++]
          if (match(m)) return m
        }
        const left = deadline - Date.now()
        if (left <= 0) throw new Error(`no matching message in ${timeoutMs} ms; received ${JSON.stringify(received)}`)
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, left)
          waiters.push(() => {
            clearTimeout(t)
            resolve()
          })
        })
      }
    },
    send(message) {
      ws.send(typeof message === 'string' ? message : JSON.stringify(message))
    },
    async close() {
      if (ws.readyState === WebSocket.CLOSED) return
      const closed = once(ws, 'close')
      ws.close()
      await closed
    },
  }
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(dashboard))
    ws.once('unexpected-response', (req, res) => {
      req.destroy()
      reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode }))
    })
    ws.once('error', reject)
  })
}

/** Resolves after `ms`: long enough for a push that should not come to have come. */
export const quietFor = (ms = 200) => new Promise((r) => setTimeout(r, ms))
