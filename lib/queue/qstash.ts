import { Client, Receiver } from '@upstash/qstash'
import type { PublishOptions, Queue, QueueVerifier } from '../context'
import { deadline } from '../deadline'
import { DependencyUnavailableError } from '../http/dependency'
import { errorFields, log } from '../log'

/** How long one publish or schedule call may take, its retries included (`QSTASH_TIMEOUT_MS` by default). */
export const QSTASH_TIMEOUT_MS = 5_000
/** Retries of a call whose connection failed (refused, reset), after 100 ms then 300 ms; an HTTP answer is not retried. */
const CONNECT_RETRIES = 2
const backoffMs = (retry: number) => 100 * 3 ** retry

/** The parts of the client's HTTP requester (@upstash/qstash 2.x, `client.http`) this adapter takes over. */
interface QStashHttp {
  requestWithBackoff: (request: unknown) => Promise<{ response: Response; error?: unknown }>
  processRequest: (request: unknown) => [string, RequestInit]
  getResponseError: (response: Response) => Promise<Error | undefined>
}

/**
 * QStash: deliveries are signed POSTs to `{publicUrl}{path}`; schedules are QStash schedules. Each call is bounded by
 * `timeoutMs`, its retries included: a QStash that does not answer fails the call in time, as one that refuses does.
 * A QStash that is down (no connection, no answer in time, a 5xx or 429) throws `DependencyUnavailableError('queue')`,
 * which the error handler answers 502 `QUEUE_UNAVAILABLE`; the caller may catch it first to undo what it wrote or keep
 * what it meant to publish for a sweep. Another refusal (4xx: the request itself was wrong) is thrown as it is.
 *
 * The client's own request loop is replaced (`client.http.requestWithBackoff`): it prints plain-text lines of its own
 * on each retry and failure, where every log line here is one JSON event (`queue.publish_retry`); and its fetch takes
 * no signal, where this one aborts at the deadline.
 */
export class QStashQueue implements Queue {
  private client: Client
  private timeoutMs: number

  constructor(token: string, private publicUrl: string, qstashUrl?: string, opts: { timeoutMs?: number } = {}) {
    this.client = new Client({ token, baseUrl: qstashUrl, retry: false, enableTelemetry: false })
    this.timeoutMs = opts.timeoutMs ?? QSTASH_TIMEOUT_MS
    const http = this.client.http as unknown as QStashHttp
    if (typeof http.processRequest !== 'function' || typeof http.getResponseError !== 'function' || typeof http.requestWithBackoff !== 'function') {
      throw new Error('@upstash/qstash: the client no longer has the request loop this adapter replaces (see lib/queue/qstash.ts)')
    }
    http.requestWithBackoff = (request) => this.send(http, request)
  }

  async publish(path: string, body: unknown, opts: PublishOptions = {}) {
    const res = await this.client.publishJSON({
      url: `${this.publicUrl}${path}`,
      body,
      delay: opts.delaySec,
      retries: opts.retries,
      deduplicationId: opts.deduplicationId,
      flowControl: opts.flowControl,
    })
    return { messageId: 'messageId' in res ? res.messageId : String(res) }
  }

  async schedule(id: string, path: string, cron: string, body?: unknown) {
    const res = await this.client.schedules.create({
      scheduleId: id,
      destination: `${this.publicUrl}${path}`,
      cron,
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: { 'Content-Type': 'application/json' },
    })
    return { scheduleId: res.scheduleId }
  }

  /**
   * One call to QStash within `timeoutMs`: retried on a failed connection only (`CONNECT_RETRIES`), the answer's
   * body read within the same bound. Logs JSON only.
   */
  private async send(http: QStashHttp, request: unknown): Promise<{ response: Response }> {
    const [url, init] = http.processRequest(request)
    const route = new URL(url).pathname.split('/').slice(0, 3).join('/') // `/v2/publish`, never the destination
    const bound = deadline(this.timeoutMs)
    try {
      for (let attempt = 0; ; attempt++) {
        let response: Response
        try {
          response = await fetch(url, { ...init, signal: bound.signal })
        } catch (e) {
          if (bound.signal.aborted || attempt >= CONNECT_RETRIES) throw new DependencyUnavailableError('queue', { cause: bound.timedOut ? bound.signal.reason : e })
          log.warn('queue.publish_retry', { route, attempt: attempt + 1, retryInMs: backoffMs(attempt), ...errorFields(e) })
          await pause(backoffMs(attempt), bound.signal)
          continue
        }
        // Read here, within the bound: the client reads it again (`json()`) from this copy.
        const text = await response.text().catch((e: unknown) => {
          throw new DependencyUnavailableError('queue', { cause: bound.timedOut ? bound.signal.reason : e })
        })
        const copy = new Response(text, { status: response.status, headers: response.headers })
        const refused = await http.getResponseError(copy.clone())
        if (refused) {
          if (response.status >= 500 || response.status === 429) throw new DependencyUnavailableError('queue', { cause: refused })
          throw refused
        }
        return { response: copy }
      }
    } finally {
      bound.clear()
    }
  }
}

/** Waits `ms`, or rejects when `signal` aborts first. */
const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(new DependencyUnavailableError('queue', { cause: signal.reason }))
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(t)
      reject(new DependencyUnavailableError('queue', { cause: signal.reason }))
    }
    signal.addEventListener('abort', onAbort, { once: true })
  })

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
