import { CronExpressionParser } from 'cron-parser'
import { errorFields, log } from '../lib/log'
import { signDelivery } from '../lib/queue/sign'
import type { PublishOptions, Queue } from '../lib/context'
import type { OutboxMessage, QueueOutbox } from './queue-outbox'

export interface LocalQueueOptions {
  /** Base URL the deliveries are signed for (what the receiver sees as its own URL). */
  publicUrl: string
  signingKey: string
  /** Hands a delivery to the app, e.g. `(req) => app.fetch(req)`; no network hop needed. */
  deliver: (req: Request) => Promise<Response>
  /** Backoff before retry n (last entry repeats). */
  retryDelaysMs?: number[]
  /**
   * Where messages and schedules are kept (infra/queue-outbox.ts: the app's database), so that a restart delivers
   * what was pending; `recover()` picks them up. Without one, nothing survives the process.
   */
  outbox?: QueueOutbox
}

export const DEDUP_WINDOW_MS = 10 * 60_000
// setTimeout overflows past ~24.8 days and fires at once, so long waits are chained.
const MAX_TIMER_MS = 2 ** 31 - 1
// Finished outbox rows are pruned once this many have finished since the last prune (and at every start).
const PRUNE_EVERY = 200

/**
 * In-process stand-in for QStash when the server runs embedded: same signed POSTs, retries, dedup and cron
 * schedules, so handlers and the verifier cannot tell the difference. With an outbox, every message, attempt and
 * schedule is written there as it happens (in order, off the publisher's path: a publish made inside a database
 * transaction must not wait for another one), and `recover()` at the next start delivers what was pending, in order
 * of due time then publication, continuing its attempt count; deduplication ids stay answered across the restart;
 * schedules are re-armed from their definition and last run (runs missed while stopped are skipped). Delivery is at
 * least once, as QStash's: one in flight when the process stops is delivered again.
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
  /** The outbox writes, one after another in the order they happened. */
  private journal: Promise<void> = Promise.resolve()
  /** Deliveries are handed to `deliver` one after another in the order they fell due (their answers are awaited apart). */
  private dispatch: Promise<unknown> = Promise.resolve()
  private finishedSincePrune = 0

  constructor(private opts: LocalQueueOptions) {
    this.retryDelaysMs = opts.retryDelaysMs ?? [1000, 5000, 15000]
  }

  /**
   * Picks up what the outbox holds from before this process: pending messages (due ones delivered at once, in
   * order), deduplication ids still within the window, schedules (unless already registered here). Call once, before
   * publishing.
   */
  async recover(): Promise<{ pending: number; schedules: number }> {
    const outbox = this.opts.outbox
    if (!outbox) return { pending: 0, schedules: 0 }
    const now = Date.now()
    const state = await outbox.load(now - DEDUP_WINDOW_MS)
    for (const d of state.deduplicated) {
      if (!this.dedup.has(d.deduplicationId)) this.dedup.set(d.deduplicationId, { messageId: d.messageId, expires: d.publishedAt + DEDUP_WINDOW_MS })
    }
    for (const m of state.pending) this.enqueue(m, Math.max(0, m.notBefore - now))
    let schedules = 0
    for (const s of state.schedules) {
      if (this.schedules.has(s.id)) continue
      try {
        this.arm(s.id, s.path, s.cron, s.body, s.lastRunAt ?? 0)
        schedules++
      } catch (e) {
        log.warn('local_queue.schedule_unreadable', { scheduleId: s.id, ...errorFields(e) })
      }
    }
    this.write(() => outbox.prune(now - DEDUP_WINDOW_MS))
    if (state.pending.length || schedules) log.info('local_queue.recovered', { pending: state.pending.length, schedules })
    return { pending: state.pending.length, schedules }
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
    const delayMs = (opts.delaySec ?? 0) * 1000
    const msg: OutboxMessage = {
      messageId,
      path,
      body: JSON.stringify(body) ?? '',
      deduplicationId: opts.deduplicationId,
      notBefore: now + delayMs,
      attempt: 0,
      retries: opts.retries ?? 3,
      flowControl: opts.flowControl,
    }
    // Accepted once the outbox holds it, as QStash answers once it has stored the message: a publish that returns
    // never leaves the message only in this process's memory (a crash right after would lose it).
    try {
      await this.record(msg)
    } catch (e) {
      if (opts.deduplicationId && this.dedup.get(opts.deduplicationId)?.messageId === messageId) this.dedup.delete(opts.deduplicationId)
      log.error('local_queue.publish_not_recorded', { messageId, path, ...errorFields(e) })
      throw new Error('Queue unavailable: the outbox did not record the message')
    }
    this.enqueue(msg, delayMs)
    return { messageId }
  }

  async schedule(id: string, path: string, cron: string, body?: unknown) {
    parseCron(cron, new Date()) // throws on a bad expression now, as QStash rejects it with 400
    const bodyText = body === undefined ? '' : JSON.stringify(body)
    const outbox = this.opts.outbox
    if (outbox) this.write(() => outbox.saveSchedule({ id, path, cron, body: bodyText }))
    this.arm(id, path, cron, bodyText, 0)
    return { scheduleId: id }
  }

  /**
   * Resolves once no delivery is waiting, in flight or awaiting a retry, and the outbox holds what happened (schedules
   * don't count). With `dueWithinMs`, deliveries due later than that from now are not waited for (a job delayed by
   * minutes, such as a permission request's expiry, while a test waits for the mail its last call queued).
   */
  async idle(opts: { dueWithinMs?: number } = {}): Promise<void> {
    const horizon = opts.dueWithinMs
    const done = () => (horizon === undefined ? this.pending === 0 : [...this.due].every((d) => d.at > Date.now() + horizon))
    for (;;) {
      if (!done()) await new Promise<void>((resolve) => this.waiters.push({ done, resolve }))
      const journal = this.journal
      await journal
      if (done() && journal === this.journal) return
    }
  }

  /**
   * Drops pending deliveries and schedules from this process and clears every timer; resolves once the outbox writes
   * already made are done (what was pending stays there for the next start).
   */
  async close(): Promise<void> {
    this.closed = true
    for (const s of this.schedules.values()) s.cancel()
    this.schedules.clear()
    for (const t of this.timers) clearTimeout(t)
    this.timers.clear()
    this.pending = 0
    this.due.clear()
    this.settle()
    await this.journal
  }

  /** (Re)arms schedule `id`, never firing at or before `last` (epoch ms). */
  private arm(id: string, path: string, cron: string, bodyText: string, last: number) {
    parseCron(cron, new Date())
    this.schedules.get(id)?.cancel()
    let cancelled = false
    let cancelTimer = () => {}
    const next = () => {
      if (cancelled || this.closed) return
      // From now (missed runs are skipped, not replayed), but never at or before the last run.
      last = parseCron(cron, new Date(Math.max(Date.now(), last))).next().getTime()
      cancelTimer = this.at(last, () => {
        const ranAt = last
        const msg: OutboxMessage = { messageId: `msg_${crypto.randomUUID()}`, path, body: bodyText, notBefore: ranAt, attempt: 0, retries: 3, scheduleId: id }
        const outbox = this.opts.outbox
        if (outbox) this.write(() => outbox.scheduleRan(id, ranAt))
        this.record(msg)
        this.enqueue(msg, 0)
        next()
      })
    }
    this.schedules.set(id, { cancel: () => { cancelled = true; cancelTimer() } })
    next()
  }

  private enqueue(msg: OutboxMessage, delayMs: number) {
    if (this.closed) return
    this.pending++
    const due = { at: Date.now() + delayMs }
    this.due.add(due)
    this.at(due.at, async () => {
      const release = msg.flowControl ? await this.slot(msg.flowControl) : () => {}
      const attempt = msg.attempt
      const ok = await this.attempt(msg, attempt).finally(release)
      if (this.closed) return // left pending in the outbox: the next start delivers it again
      const outbox = this.opts.outbox
      if (ok) {
        if (outbox) this.finish(outbox, msg.messageId, 'delivered')
      } else if (attempt < msg.retries) {
        const delay = this.retryDelaysMs[Math.min(attempt, this.retryDelaysMs.length - 1)] ?? 0
        const retry = { ...msg, attempt: attempt + 1, notBefore: Date.now() + delay }
        if (outbox) this.write(() => outbox.retry(msg.messageId, retry.attempt, retry.notBefore))
        this.enqueue(retry, delay)
      } else {
        log.warn('local_queue.gave_up', { messageId: msg.messageId, path: msg.path, attempts: attempt + 1 })
        if (outbox) this.finish(outbox, msg.messageId, 'failed')
      }
      this.pending--
      this.due.delete(due)
      this.settle()
    })
  }

  private async attempt(msg: OutboxMessage, retried: number): Promise<boolean> {
    const url = `${this.opts.publicUrl}${msg.path}`
    // Handed over in turn; the answer is awaited outside the turn (wrapped, so the chain does not wait for it).
    const handed = this.dispatch.then(async () => {
      const headers = new Headers({
        'Content-Type': 'application/json',
        'Upstash-Signature': await signDelivery(this.opts.signingKey, url, msg.body),
        'Upstash-Message-Id': msg.messageId,
        'Upstash-Retried': String(retried),
      })
      if (msg.scheduleId) headers.set('Upstash-Schedule-Id', msg.scheduleId)
      return { answer: this.opts.deliver(new Request(url, { method: 'POST', headers, body: msg.body })) }
    })
    this.dispatch = handed.catch(() => {})
    try {
      const res = await (await handed).answer
      await res.body?.cancel() // nobody reads it; release the stream
      return res.ok
    } catch (err) {
      log.warn('local_queue.delivery_failed', { messageId: msg.messageId, path: msg.path, retried, ...errorFields(err) })
      return false
    }
  }

  /** Writes `msg` to the outbox, if any. */
  /** Adds `msg` to the outbox after the writes before it; rejects when that write fails (nothing recorded). */
  private record(msg: OutboxMessage): Promise<void> {
    const outbox = this.opts.outbox
    if (!outbox) return Promise.resolve()
    const added = this.journal.then(() => outbox.add(msg))
    this.journal = added.catch(() => {}) // the publisher is told; later writes go on
    return added
  }

  private finish(outbox: QueueOutbox, messageId: string, state: 'delivered' | 'failed') {
    this.write(() => outbox.finish(messageId, state))
    if (++this.finishedSincePrune >= PRUNE_EVERY) {
      this.finishedSincePrune = 0
      this.write(() => outbox.prune(Date.now() - DEDUP_WINDOW_MS))
    }
  }

  /**
   * Appends an outbox write after the ones before it. A failed write is logged and the queue goes on from memory:
   * the message is still delivered by this process, only a restart before then would lose it.
   */
  private write(fn: () => Promise<void>) {
    this.journal = this.journal.then(fn).catch((e) => log.error('local_queue.outbox_write_failed', errorFields(e)))
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

/** QStash crons are 5-field, optionally prefixed `CRON_TZ=<zone> `; 6-field (seconds) also works here. */
function parseCron(cron: string, from: Date) {
  const m = /^CRON_TZ=(\S+)\s+(.*)$/.exec(cron.trim())
  return CronExpressionParser.parse(m ? m[2] : cron, { currentDate: from, tz: m?.[1] })
}
