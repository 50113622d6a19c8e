import { and, asc, eq, gt, inArray, isNotNull, lt } from 'drizzle-orm'
import type { PublishOptions } from '../lib/context'
import { asService, type Db } from '../lib/db/rls'
import { queueMessages, queueSchedules } from '../schema'

/** One message as the embedded queue keeps it (infra/local-queue.ts). */
export interface OutboxMessage {
  messageId: string
  path: string
  /** The JSON text delivered, exactly as signed. */
  body: string
  deduplicationId?: string
  /** When the next attempt is due (epoch ms). */
  notBefore: number
  /** The next attempt's `Upstash-Retried`. */
  attempt: number
  retries: number
  flowControl?: PublishOptions['flowControl']
  scheduleId?: string
}

export interface StoredSchedule {
  id: string
  path: string
  cron: string
  body: string
  /** The last run (epoch ms), if any: a re-armed schedule never runs at or before it. */
  lastRunAt?: number
}

export interface OutboxState {
  /** Messages still to deliver, in order of due time, then publication. */
  pending: OutboxMessage[]
  /** Deduplication ids published within the window, with the message each answers and when it was published (epoch ms). */
  deduplicated: Array<{ deduplicationId: string; messageId: string; publishedAt: number }>
  schedules: StoredSchedule[]
}

/** Where the embedded queue keeps its messages and schedules so that a restart loses none of them. */
export interface QueueOutbox {
  add(msg: OutboxMessage): Promise<void>
  /** A failed attempt: the next one is `attempt`, due at `notBefore`. */
  retry(messageId: string, attempt: number, notBefore: number): Promise<void>
  finish(messageId: string, state: 'delivered' | 'failed'): Promise<void>
  saveSchedule(s: StoredSchedule): Promise<void>
  scheduleRan(id: string, at: number): Promise<void>
  /** What a start picks up: pending messages, deduplication ids published since `since`, schedules. */
  load(since: number): Promise<OutboxState>
  /** Drops finished messages published before `before` (past the deduplication window). */
  prune(before: number): Promise<void>
}

/** The outbox in the app's database (queue_messages, queue_schedules), as the service (`localQueue`). */
export function databaseOutbox(db: Db): QueueOutbox {
  const run = <T>(fn: (tx: Db) => Promise<T>) => asService(db, 'localQueue', fn)
  return {
    add: (m) =>
      run((tx) =>
        tx
          .insert(queueMessages)
          .values({
            messageId: m.messageId,
            path: m.path,
            body: m.body,
            deduplicationId: m.deduplicationId ?? null,
            notBefore: new Date(m.notBefore),
            attempt: m.attempt,
            retries: m.retries,
            flowControl: m.flowControl ?? null,
            scheduleId: m.scheduleId ?? null,
          })
          .onConflictDoNothing(),
      ).then(() => {}),
    retry: (messageId, attempt, notBefore) =>
      run((tx) =>
        tx.update(queueMessages).set({ attempt, notBefore: new Date(notBefore), updatedAt: new Date() }).where(eq(queueMessages.messageId, messageId)),
      ).then(() => {}),
    finish: (messageId, state) =>
      run((tx) => tx.update(queueMessages).set({ state, updatedAt: new Date() }).where(eq(queueMessages.messageId, messageId))).then(() => {}),
    saveSchedule: (s) =>
      run((tx) =>
        tx
          .insert(queueSchedules)
          .values({ id: s.id, path: s.path, cron: s.cron, body: s.body })
          .onConflictDoUpdate({ target: queueSchedules.id, set: { path: s.path, cron: s.cron, body: s.body, updatedAt: new Date() } }),
      ).then(() => {}),
    scheduleRan: (id, at) =>
      run((tx) => tx.update(queueSchedules).set({ lastRunAt: new Date(at) }).where(eq(queueSchedules.id, id))).then(() => {}),
    load: (since) =>
      run(async (tx) => {
        const pending = await tx
          .select()
          .from(queueMessages)
          .where(eq(queueMessages.state, 'pending'))
          .orderBy(asc(queueMessages.notBefore), asc(queueMessages.seq))
        const deduplicated = await tx
          .select({ deduplicationId: queueMessages.deduplicationId, messageId: queueMessages.messageId, createdAt: queueMessages.createdAt })
          .from(queueMessages)
          .where(and(isNotNull(queueMessages.deduplicationId), gt(queueMessages.createdAt, new Date(since))))
          .orderBy(asc(queueMessages.seq))
        const schedules = await tx.select().from(queueSchedules).orderBy(asc(queueSchedules.id))
        return {
          pending: pending.map((r) => ({
            messageId: r.messageId,
            path: r.path,
            body: r.body,
            deduplicationId: r.deduplicationId ?? undefined,
            notBefore: r.notBefore.getTime(),
            attempt: r.attempt,
            retries: r.retries,
            flowControl: r.flowControl ?? undefined,
            scheduleId: r.scheduleId ?? undefined,
          })),
          deduplicated: deduplicated.map((r) => ({ deduplicationId: r.deduplicationId!, messageId: r.messageId, publishedAt: r.createdAt.getTime() })),
          schedules: schedules.map((s) => ({ id: s.id, path: s.path, cron: s.cron, body: s.body, lastRunAt: s.lastRunAt?.getTime() })),
        }
      }),
    prune: (before) =>
      run((tx) =>
        tx.delete(queueMessages).where(and(inArray(queueMessages.state, ['delivered', 'failed']), lt(queueMessages.createdAt, new Date(before)))),
      ).then(() => {}),
  }
}
