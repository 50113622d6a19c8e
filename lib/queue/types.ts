/** Job queue and schedules (QStash in production, in-process when embedded). Deliveries are signed POSTs to a path. */
export interface PublishOptions {
  delaySec?: number
  retries?: number
  deduplicationId?: string
  /** At most `parallelism` deliveries with this `key` in flight at once (QStash flow control). */
  flowControl?: { key: string; parallelism: number }
}

export interface Queue {
  /** Delivers `body` as JSON to `path` (e.g. `/api/queue/chat`) on the web service, at least once. */
  publish(path: string, body: unknown, opts?: PublishOptions): Promise<{ messageId: string }>
  /** Delivers to `path` on a cron schedule; the same id replaces an existing schedule. */
  schedule(id: string, path: string, cron: string, body?: unknown): Promise<{ scheduleId: string }>
}

/** Verifies that a delivery came from the queue (QStash's `Upstash-Signature` JWT). */
export interface QueueVerifier {
  verify(signature: string, body: string, url: string): Promise<boolean>
}
