import { CronExpressionParser } from 'cron-parser'
import { signDelivery } from '../lib/queue/sign'
import type { PublishOptions, Queue } from '../lib/context'

export interface LocalQueueOptions {
  /** Base URL the deliveries are signed for (what the receiver sees as its own URL). */
  publicUrl: string
  signingKey: string
  /** Hands a delivery to the app, e.g. `(req) => app.fetch(req)`; no network hop needed. */
  deliver: (req: Request) => Promise<Response>
  /** Backoff before retry n (last entry repeats). */
  retryDelaysMs?: number[]
}

const DEDUP_WINDOW_MS = 10 * 60_000
// setTimeout overflows past ~24.8 days and fires at once, so long waits are chained.
const MAX_TIMER_MS = 2 ** 31 - 1

/**
 * In-process stand-in for QStash when the server runs embedded: same signed POSTs, retries,
 * dedup and cron schedules, so handlers and the verifier cannot tell the difference.
 * Nothing survives a restart (fine for local use).
 */
export class LocalQueue implements Queue {
  private timers = new Set<ReturnType<typeof setTimeout>>()
  private schedules = new Map<string, { cancel: () => void }>()
  private dedup = new Map<string, { messageId: string; expires: number }>()
  private flows = new Map<string, { active: number; waiting: Array<() => void> }>()
  private pending = 0
  /** When each delivery not yet done (waiting, in flight) is due, epoch ms: what `idle({dueWithinMs})` looks at. */
  private due = new Set<{ at: number }>()
  private waiters: Array<{ done: () => boolean; resolve: () => void }> = []
  private closed = false
  private retryDelaysMs: number[]

  constructor(private opts: LocalQueueOptions) {
    this.retryDelaysMs = opts.retryDelaysMs ?? [1000, 5000, 15000]
  }

  async publish(path: string, body: unknown, opts: PublishOptions = {}) {
    const now = Date.now()
    for (const [id, d] of this.dedup) if (d.expires <= now) this.dedup.delete(id)
    if (opts.deduplicationId) {
      // QStash answers a duplicate with the original message id and does not enqueue it.
      const seen = this.dedup.get(opts.deduplicationId)
      if (seen) return { messageId: seen.messageId }
    }
    const messageId = `msg_${crypto.randomUUID()}`
    if (opts.deduplicationId) this.dedup.set(opts.deduplicationId, { messageId, expires: now + DEDUP_WINDOW_MS })
    this.enqueue({ messageId, path, body: JSON.stringify(body) ?? '', retries: opts.retries ?? 3, flowControl: opts.flowControl }, 0, (opts.delaySec ?? 0) * 1000)
    return { messageId }
  }

  async schedule(id: string, path: string, cron: string, body?: unknown) {
    parseCron(cron, new Date()) // throws on a bad expression now, as QStash rejects it with 400
    this.schedules.get(id)?.cancel()
    const bodyText = body === undefined ? '' : JSON.stringify(body)
    let cancelled = false
    let cancelTimer = () => {}
    let last = 0
    const arm = () => {
      if (cancelled || this.closed) return
      // From now (missed runs are skipped, not replayed), but never at or before the last run.
      last = parseCron(cron, new Date(Math.max(Date.now(), last))).next().getTime()
      cancelTimer = this.at(last, () => {
        const messageId = `msg_${crypto.randomUUID()}`
        this.enqueue({ messageId, path, body: bodyText, retries: 3, scheduleId: id }, 0, 0)
        arm()
      })
    }
    this.schedules.set(id, { cancel: () => { cancelled = true; cancelTimer() } })
    arm()
    return { scheduleId: id }
  }

  /**
   * Resolves once no delivery is waiting, in flight or awaiting a retry (schedules don't count). With
   * `dueWithinMs`, deliveries due later than that from now are not waited for (a job delayed by minutes, such as a
   * permission request's expiry, while a test waits for the mail its last call queued).
   */
  idle(opts: { dueWithinMs?: number } = {}): Promise<void> {
    const horizon = opts.dueWithinMs
    const done = () => (horizon === undefined ? this.pending === 0 : [...this.due].every((d) => d.at > Date.now() + horizon))
    return done() ? Promise.resolve() : new Promise((resolve) => this.waiters.push({ done, resolve }))
  }

  /** Drops pending deliveries and schedules; clears every timer. */
  close() {
    this.closed = true
    for (const s of this.schedules.values()) s.cancel()
    this.schedules.clear()
    for (const t of this.timers) clearTimeout(t)
    this.timers.clear()
    this.pending = 0
    this.due.clear()
    this.settle()
  }

  private enqueue(msg: Message, attempt: number, delayMs: number) {
    if (this.closed) return
    this.pending++
    const due = { at: Date.now() + delayMs }
    this.due.add(due)
    this.at(due.at, async () => {
      const release = msg.flowControl ? await this.slot(msg.flowControl) : () => {}
      const ok = await this.attempt(msg, attempt).finally(release)
      if (this.closed) return
      if (!ok) {
        if (attempt < msg.retries) {
          this.enqueue(msg, attempt + 1, this.retryDelaysMs[Math.min(attempt, this.retryDelaysMs.length - 1)] ?? 0)
        } else {
          console.warn(`[local-queue] giving up on ${msg.messageId} to ${msg.path} after ${attempt + 1} attempts`)
        }
      }
      this.pending--
      this.due.delete(due)
      this.settle()
    })
  }

  private async attempt(msg: Message, retried: number): Promise<boolean> {
    const url = `${this.opts.publicUrl}${msg.path}`
    try {
      const headers = new Headers({
        'Content-Type': 'application/json',
        'Upstash-Signature': await signDelivery(this.opts.signingKey, url, msg.body),
        'Upstash-Message-Id': msg.messageId,
        'Upstash-Retried': String(retried),
      })
      if (msg.scheduleId) headers.set('Upstash-Schedule-Id', msg.scheduleId)
      const res = await this.opts.deliver(new Request(url, { method: 'POST', headers, body: msg.body }))
      await res.body?.cancel() // nobody reads it; release the stream
      return res.ok
    } catch (err) {
      console.warn(`[local-queue] delivery of ${msg.messageId} to ${msg.path} failed:`, err)
      return false
    }
  }

  /** Waits for one of the key's `parallelism` delivery slots (QStash flow control); resolves to its release. */
  private async slot(fc: { key: string; parallelism: number }): Promise<() => void> {
    const flow = this.flows.get(fc.key) ?? { active: 0, waiting: [] as Array<() => void> }
    this.flows.set(fc.key, flow)
    if (flow.active >= Math.max(1, fc.parallelism)) await new Promise<void>((resolve) => flow.waiting.push(resolve))
    else flow.active++
    return () => {
      const next = flow.waiting.shift()
      if (next) next() // the slot passes on as is
      else flow.active--
    }
  }

  /** Runs `fn` at epoch ms `when`; returns a canceller. */
  private at(when: number, fn: () => void): () => void {
    let t: ReturnType<typeof setTimeout>
    const wait = () => {
      const ms = Math.max(0, when - Date.now())
      t = setTimeout(() => {
        this.timers.delete(t)
        if (ms > MAX_TIMER_MS) wait()
        else fn()
      }, Math.min(ms, MAX_TIMER_MS))
      this.timers.add(t)
    }
    wait()
    return () => { clearTimeout(t); this.timers.delete(t) }
  }

  private settle() {
    const ready = this.waiters.filter((w) => w.done())
    this.waiters = this.waiters.filter((w) => !ready.includes(w))
    for (const w of ready) w.resolve()
  }
}

interface Message {
  messageId: string
  path: string
  body: string
  retries: number
  scheduleId?: string
  flowControl?: PublishOptions['flowControl']
}

/** QStash crons are 5-field, optionally prefixed `CRON_TZ=<zone> `; 6-field (seconds) also works here. */
function parseCron(cron: string, from: Date) {
  const m = /^CRON_TZ=(\S+)\s+(.*)$/.exec(cron.trim())
  return CronExpressionParser.parse(m ? m[2] : cron, { currentDate: from, tz: m?.[1] })
}
