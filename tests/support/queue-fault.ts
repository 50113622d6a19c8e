import type { Queue } from '../../lib/context'
import { QStashQueue } from '../../lib/queue/qstash'
import { startFaultProxy, type FaultProxy } from './fault-proxy'
import { serveFetch, type Loopback } from './loopback'
import { startQStashServer, type QStashServer } from './qstash-server'

/**
 * The real QStash adapter (`lib/queue/qstash.ts`) talking to the QStash look-alike through the fault proxy (HTTP mode),
 * for a route's publish cut at the moment it is made. Deliveries go to `deliver` (a harness's web app) over a socket,
 * signed with `signingKey` (the key its verifier holds).
 */
export interface QueueFault {
  qstash: QStashServer
  proxy: FaultProxy
  /** An adapter whose every call gives up after `timeoutMs` (`QSTASH_TIMEOUT_MS`). */
  queue(timeoutMs?: number): QStashQueue
  close(): Promise<void>
}

export async function startQueueFault(deliver: (req: Request) => Response | Promise<Response>, signingKey = 'queue-fault-signing-key'): Promise<QueueFault> {
  const token = `queue-fault-${crypto.randomUUID()}`
  const qstash = await startQStashServer({ token, currentSigningKey: signingKey, nextSigningKey: signingKey })
  const proxy = await startFaultProxy({ target: qstash.url, mode: 'http' })
  const receiver: Loopback = await serveFetch(deliver)
  return {
    qstash,
    proxy,
    queue: (timeoutMs = 400) => new QStashQueue(token, receiver.url, proxy.url, { timeoutMs }),
    async close() {
      await proxy.close()
      await qstash.close()
      await receiver.close()
    },
  }
}

/**
 * Runs `fn` with `services.queue` publishing through `queue` instead (the harness's services object is shared by
 * every app it built, so the routes under test use it at once), and puts the harness's own back afterwards.
 */
export async function publishingThrough<T>(services: { queue: Queue }, queue: Queue, fn: () => T | Promise<T>): Promise<T> {
  const own = services.queue.publish
  services.queue.publish = (path, body, opts) => queue.publish(path, body, opts)
  try {
    return await fn()
  } finally {
    services.queue.publish = own
  }
}
