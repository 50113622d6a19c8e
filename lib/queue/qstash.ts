import { Client, Receiver } from '@upstash/qstash'
import type { PublishOptions, Queue, QueueVerifier } from '../context'
import { deadline } from '../deadline'

/** How long one publish or schedule call may take, its retries included (`QSTASH_TIMEOUT_MS` by default). */
export const QSTASH_TIMEOUT_MS = 5_000
/** Retries of a call whose connection failed (refused, reset), after 100 ms then 300 ms; an HTTP answer is not retried. */
const CONNECT_RETRIES = 2

/**
 * QStash: deliveries are signed POSTs to `{publicUrl}{path}`; schedules are QStash schedules. Each call is bounded by
 * `deadline` (`timeoutMs`, its retries included): a QStash that does not answer fails the call in time, as one that
 * refuses does, and the caller answers `QUEUE_UNAVAILABLE` or keeps what it meant to publish for a sweep. The client
 * takes no signal: a call past its deadline is left to end on its own (a Worker's request ends it).
 */
export class QStashQueue implements Queue {
  private client: Client
  private timeoutMs: number

  constructor(token: string, private publicUrl: string, qstashUrl?: string, opts: { timeoutMs?: number } = {}) {
    this.client = new Client({ token, baseUrl: qstashUrl, retry: { retries: CONNECT_RETRIES, backoff: (n) => 100 * 3 ** n } })
    this.timeoutMs = opts.timeoutMs ?? QSTASH_TIMEOUT_MS
  }

  async publish(path: string, body: unknown, opts: PublishOptions = {}) {
    const res = await this.bounded(() => this.client.publishJSON({
      url: `${this.publicUrl}${path}`,
      body,
      delay: opts.delaySec,
      retries: opts.retries,
      deduplicationId: opts.deduplicationId,
      flowControl: opts.flowControl,
    }))
    return { messageId: 'messageId' in res ? res.messageId : String(res) }
  }

  async schedule(id: string, path: string, cron: string, body?: unknown) {
    const res = await this.bounded(() => this.client.schedules.create({
      scheduleId: id,
      destination: `${this.publicUrl}${path}`,
      cron,
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: { 'Content-Type': 'application/json' },
    }))
    return { scheduleId: res.scheduleId }
  }

  /** `call`, or a `TimeoutError` once `timeoutMs` has gone by without its answer. */
  private async bounded<T>(call: () => Promise<T>): Promise<T> {
    const bound = deadline(this.timeoutMs)
    try {
      return await Promise.race([
        call(),
        new Promise<never>((_, reject) => bound.signal.addEventListener('abort', () => reject(bound.signal.reason), { once: true })),
      ])
    } finally {
      bound.clear()
    }
  }
}

/** Checks the `Upstash-Signature` JWT (issuer, body hash, URL, expiry) with the current or next key. */
export class QStashVerifier implements QueueVerifier {
  private receiver: Receiver

  constructor(currentSigningKey: string, nextSigningKey: string) {
    this.receiver = new Receiver({ currentSigningKey, nextSigningKey })
  }

  async verify(signature: string, body: string, url: string) {
    return this.receiver.verify({ signature, body, url }).catch(() => false)
  }
}
