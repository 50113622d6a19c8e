import { createServer, type IncomingMessage } from 'node:http'
import { CronExpressionParser } from 'cron-parser'
import { signDelivery } from '../../lib/queue/sign'
import { listen } from './loopback'

/**
 * A small QStash look-alike for tests: the real @upstash/qstash Client talks to it over HTTP
 * (`/v2/publish/<destination>`, `/v2/schedules/<destination>`, `/v2/keys`), and it delivers with
 * real fetches signed like QStash. Supported headers: Upstash-Delay, Upstash-Not-Before,
 * Upstash-Retries, Upstash-Deduplication-Id, Upstash-Method, Upstash-Cron, Upstash-Schedule-Id,
 * Upstash-Forward-*; others are recorded but ignored. Schedules are stored, not run on a clock
 * (QStash crons have minute granularity): fire one with `triggerSchedule(id)`.
 */
export interface QStashServerOptions {
  token: string
  currentSigningKey: string
  nextSigningKey: string
}

export interface PublishedMessage {
  messageId: string
  destination: string
  body: string
  /** Headers of the publish request as QStash received them (lower-case names). */
  headers: Record<string, string>
  attempts: number
  state: 'pending' | 'delivered' | 'failed'
  scheduleId?: string
}

export interface CreatedSchedule {
  scheduleId: string
  destination: string
  cron: string
  body: string
  headers: Record<string, string>
}

export interface QStashServer {
  url: string
  published: PublishedMessage[]
  schedules: Map<string, CreatedSchedule>
  /** Current key becomes the old next key, and a fresh next key is made (QStash's rotation). */
  rotateKeys(): { current: string; next: string }
  /** Delivers a schedule's message now, as if its cron had fired. */
  triggerSchedule(scheduleId: string): PublishedMessage
  close(): Promise<void>
}

// Real QStash backs off over minutes; tests want milliseconds.
const RETRY_BASE_MS = 50

export async function startQStashServer(opts: QStashServerOptions): Promise<QStashServer> {
  const keys = { current: opts.currentSigningKey, next: opts.nextSigningKey }
  const published: PublishedMessage[] = []
  const schedules = new Map<string, CreatedSchedule>()
  const dedup = new Map<string, string>()
  const timers = new Set<ReturnType<typeof setTimeout>>()
  let closed = false

  const later = (ms: number, fn: () => void) => {
    if (closed) return
    const t = setTimeout(() => { timers.delete(t); fn() }, ms)
    timers.add(t)
  }

  async function attempt(msg: PublishedMessage, retried: number) {
    const h = msg.headers
    const headers = new Headers()
    for (const [k, v] of Object.entries(h)) {
      if (k.startsWith('upstash-forward-')) headers.set(k.slice('upstash-forward-'.length), v)
    }
    if (h['content-type']) headers.set('Content-Type', h['content-type'])
    headers.set('User-Agent', 'Upstash-QStash')
    headers.set('Upstash-Signature', await signDelivery(keys.current, msg.destination, msg.body))
    headers.set('Upstash-Message-Id', msg.messageId)
    headers.set('Upstash-Retried', String(retried))
    if (msg.scheduleId) headers.set('Upstash-Schedule-Id', msg.scheduleId)
    const method = (h['upstash-method'] ?? 'POST').toUpperCase()
    msg.attempts++
    let ok = false
    try {
      const res = await fetch(msg.destination, {
        method,
        headers,
        body: method === 'GET' || method === 'HEAD' ? undefined : msg.body,
      })
      await res.body?.cancel()
      ok = res.ok
    } catch {
      ok = false // unreachable destination counts as a failed attempt, like QStash
    }
    const retries = Number(h['upstash-retries'] ?? 3)
    if (ok) msg.state = 'delivered'
    else if (retried < retries) later(RETRY_BASE_MS * 2 ** retried, () => void attempt(msg, retried + 1))
    else msg.state = 'failed'
  }

  function enqueue(msg: Omit<PublishedMessage, 'attempts' | 'state'>, delayMs = 0) {
    const full: PublishedMessage = { ...msg, attempts: 0, state: 'pending' }
    published.push(full)
    later(delayMs, () => void attempt(full, 0))
    return full
  }

  const server = createServer(async (req, res) => {
    const send = (status: number, json: unknown) => {
      res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(json))
    }
    if (req.headers.authorization !== `Bearer ${opts.token}`) return send(401, { error: 'Unauthorized' })
    const body = await readBody(req)
    const headers = flatHeaders(req)
    const path = req.url ?? '/'
    let m: RegExpExecArray | null

    if (req.method === 'POST' && (m = /^\/v2\/publish\/(.+)$/.exec(path))) {
      const destination = parseDestination(m[1])
      if (!destination) return send(400, { error: `invalid destination url: ${m[1]}` })
      const dedupId = headers['upstash-deduplication-id']
      // A duplicate is accepted (202) with the original id but not enqueued.
      if (dedupId && dedup.has(dedupId)) return send(202, { messageId: dedup.get(dedupId), deduplicated: true })
      const delayMs = headers['upstash-not-before']
        ? Number(headers['upstash-not-before']) * 1000 - Date.now()
        : parseDuration(headers['upstash-delay'])
      if (delayMs === null || Number.isNaN(delayMs)) return send(400, { error: 'invalid Upstash-Delay' })
      const msg = enqueue({ messageId: `msg_${crypto.randomUUID()}`, destination, body, headers }, Math.max(0, delayMs))
      if (dedupId) dedup.set(dedupId, msg.messageId)
      return send(201, { messageId: msg.messageId })
    }

    if (req.method === 'POST' && (m = /^\/v2\/schedules\/(.+)$/.exec(path))) {
      const destination = parseDestination(m[1])
      if (!destination) return send(400, { error: `invalid destination url: ${m[1]}` })
      const cron = headers['upstash-cron']
      try {
        CronExpressionParser.parse(cron ?? '')
      } catch {
        return send(400, { error: `invalid cron: ${cron}` })
      }
      // The same id replaces the existing schedule.
      const scheduleId = headers['upstash-schedule-id'] ?? `scd_${crypto.randomUUID()}`
      schedules.set(scheduleId, { scheduleId, destination, cron: cron!, body, headers })
      return send(200, { scheduleId })
    }

    if (req.method === 'GET' && path === '/v2/keys') return send(200, keys)
    if (req.method === 'POST' && path === '/v2/keys/rotate') return send(200, rotateKeys())
    return send(404, { error: 'not found' })
  })

  function rotateKeys() {
    keys.current = keys.next
    keys.next = `sig_${crypto.randomUUID().replace(/-/g, '')}`
    return { ...keys }
  }

  const loopback = await listen(server)

  return {
    url: loopback.url,
    published,
    schedules,
    rotateKeys,
    triggerSchedule(scheduleId) {
      const s = schedules.get(scheduleId)
      if (!s) throw new Error(`no schedule ${scheduleId}`)
      return enqueue({ messageId: `msg_${crypto.randomUUID()}`, destination: s.destination, body: s.body, headers: s.headers, scheduleId })
    },
    async close() {
      closed = true
      for (const t of timers) clearTimeout(t)
      timers.clear()
      await loopback.close()
    },
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.on('error', reject)
  })
}

function flatHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v
  return out
}

/** The destination is the rest of the path, raw or percent-encoded. */
function parseDestination(raw: string): string | null {
  const dest = /^https?%3A/i.test(raw) ? decodeURIComponent(raw) : raw
  return /^https?:\/\/[^/]/.test(dest) ? dest : null
}

/** `Upstash-Delay` is `<n><s|m|h|d>`; absent means now. */
function parseDuration(v: string | undefined): number | null {
  if (!v) return 0
  const m = /^(\d+)(s|m|h|d)$/.exec(v.trim())
  if (!m) return null
  return Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 's' | 'm' | 'h' | 'd']
}
