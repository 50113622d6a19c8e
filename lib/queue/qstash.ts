import { Client, Receiver } from '@upstash/qstash'
import type { PublishOptions, Queue, QueueVerifier } from '../context'

/** QStash: deliveries are signed POSTs to `{publicUrl}{path}`; schedules are QStash schedules. */
export class QStashQueue implements Queue {
  private client: Client

  constructor(token: string, private publicUrl: string, qstashUrl?: string) {
    this.client = new Client({ token, baseUrl: qstashUrl })
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
