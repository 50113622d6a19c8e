import { createServer } from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { eq } from 'drizzle-orm'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { migratePostgres, openPglite, openPostgres, type NodeDatabase } from '../../infra/database'
import { LocalQueue } from '../../infra/local-queue'
import { databaseOutbox } from '../../infra/queue-outbox'
import { asService } from '../../lib/db/rls'
import { QStashVerifier } from '../../lib/queue/qstash'
import { queueMessages, queueSchedules } from '../../schema'
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy'
import { listen, type Loopback } from '../support/loopback'
import { integrationConfigured } from '../support/stores'

const KEY = 'sig_durable_0123456789abcdef'
const PUBLIC = 'http://localhost:8787'
const verifier = new QStashVerifier(KEY, 'sig_unused_next')
const WAIT = { timeout: 20_000 }

interface Delivered {
  path: string
  body: unknown
  messageId: string
  retried: string
  scheduleId: string | null
  valid: boolean
}

/** A database that can be "restarted": closed and opened again over the same storage (a PGlite directory, a Postgres database). */
interface Store {
  open(): Promise<NodeDatabase>
  dispose(): Promise<void>
}

async function pgliteStore(): Promise<Store> {
  const dir = mkdtempSync(join(tmpdir(), 'queue-outbox-'))
  return { open: () => openPglite(dir), dispose: async () => rmSync(dir, { recursive: true, force: true }) }
}

async function postgresStore(): Promise<Store> {
  const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL })
  await admin.connect()
  const name = `q_${crypto.randomUUID().replace(/-/g, '').slice(0, 16)}`
  await admin.query(`create database ${name}`)
  const url = new URL(process.env.TEST_DATABASE_URL!)
  url.pathname = `/${name}`
  await migratePostgres(url.toString())
  return {
    open: () => openPostgres(url.toString(), { migrate: false }),
    async dispose() {
      await admin.query(`drop database if exists ${name} with (force)`)
      await admin.end()
    },
  }
}

/** Builds queues over one store, as a server start would; each one's deliveries are recorded (signature checked). */
function queues(store: () => Store) {
  const open: Array<{ q: LocalQueue; db: NodeDatabase }> = []
  afterEach(async () => {
    for (const { q, db } of open.splice(0)) {
      await q.close()
      await db.close()
    }
  })
  return async function start(opts: { deliver?: (req: Request) => Promise<Response>; retryDelaysMs?: number[] } = {}) {
    const db = await store().open()
    const delivered: Delivered[] = []
    const q = new LocalQueue({
      publicUrl: PUBLIC,
      signingKey: KEY,
      retryDelaysMs: opts.retryDelaysMs ?? [10, 20],
      outbox: databaseOutbox(db.db),
      deliver:
        opts.deliver ??
        (async (req) => {
          const text = await req.text()
          delivered.push({
            path: new URL(req.url).pathname,
            body: JSON.parse(text || 'null'),
            messageId: req.headers.get('upstash-message-id')!,
            retried: req.headers.get('upstash-retried')!,
            scheduleId: req.headers.get('upstash-schedule-id'),
            valid: await verifier.verify(req.headers.get('upstash-signature') ?? '', text, req.url),
          })
          return new Response('ok')
        }),
    })
    const entry = { q, db }
    open.push(entry)
    /** Stops the queue and the database, delivering nothing more: the process ends. */
    const stop = async () => {
      open.splice(open.indexOf(entry), 1)
      await q.close()
      await db.close()
    }
    const rows = () => asService(db.db, 'localQueue', (tx) => tx.select().from(queueMessages).orderBy(queueMessages.seq))
    return { q, db, delivered, stop, rows }
  }
}

const storeSets: Array<[string, () => Promise<Store>]> = [['pglite directory', pgliteStore], ...(integrationConfigured ? [['postgres', postgresStore] as [string, () => Promise<Store>]] : [])]

describe.each(storeSets)('durable in-process queue over a %s', { timeout: 120_000 }, (_name, make) => {
  let store: Store
  beforeAll(async () => {
    store = await make()
  })
  afterAll(async () => {
    await store?.dispose()
  })
  const start = queues(() => store)

  it('delivers what was pending before a restart once, in order of due time then publication, signed', async () => {
    const first = await start()
    // Published (each once the outbox holds it) and stopped before any became due: nothing delivered by this process.
    const a = await first.q.publish('/api/queue/a', { n: 'a' }, { delaySec: 0.3 })
    const late = await first.q.publish('/api/queue/late', { n: 'late' }, { delaySec: 0.6 })
    const b = await first.q.publish('/api/queue/b', { n: 'b' }, { delaySec: 0.3, deduplicationId: 'dedup-b', retries: 5 })
    await first.stop()
    expect(first.delivered).toHaveLength(0)

    const second = await start()
    expect(await second.q.recover()).toEqual({ pending: 3, schedules: 0 })
    await second.q.idle()
    expect(second.delivered.map((d) => [d.path, d.body, d.messageId, d.retried])).toEqual([
      ['/api/queue/a', { n: 'a' }, a.messageId, '0'],
      ['/api/queue/b', { n: 'b' }, b.messageId, '0'],
      ['/api/queue/late', { n: 'late' }, late.messageId, '0'],
    ])
    expect(second.delivered.every((d) => d.valid)).toBe(true)
    const ids = [a, late, b].map((m) => m.messageId)
    expect((await second.rows()).filter((r) => ids.includes(r.messageId)).map((r) => r.state)).toEqual(['delivered', 'delivered', 'delivered'])

    // The deduplication id still answers the original message across the restart, and nothing is sent again.
    expect(await second.q.publish('/api/queue/b', { n: 'b again' }, { deduplicationId: 'dedup-b' })).toEqual({ messageId: b.messageId })
    await second.q.idle()
    expect(second.delivered).toHaveLength(3)
    await second.stop()

    // Once: a further start finds nothing to deliver, and the id is still taken.
    const third = await start()
    expect(await third.q.recover()).toEqual({ pending: 0, schedules: 0 })
    expect(await third.q.publish('/api/queue/b', {}, { deduplicationId: 'dedup-b' })).toEqual({ messageId: b.messageId })
    await third.q.idle()
    expect(third.delivered).toHaveLength(0)
    await third.stop()
  })

  it('continues a failing message’s attempts after the restart, and gives up after its retries', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    try {
      const first = await start({ deliver: async () => new Response('down', { status: 503 }), retryDelaysMs: [10, 60_000] })
      const { messageId } = await first.q.publish('/api/queue/x', { x: 1 }, { retries: 3 })
      // Two attempts (retried 0 and 1), then a long wait: stop during it.
      await vi.waitFor(async () => expect((await first.rows()).find((r) => r.messageId === messageId)).toMatchObject({ attempt: 2, state: 'pending' }), WAIT)
      const [row] = (await first.rows()).filter((r) => r.messageId === messageId)
      expect(row.notBefore.getTime()).toBeGreaterThan(Date.now() + 30_000) // the long wait is kept, not restarted
      await first.stop()
      // The wait is over by the next start (time passed while the server was stopped).
      const db = await store.open()
      await asService(db.db, 'localQueue', (tx) => tx.update(queueMessages).set({ notBefore: new Date() }).where(eq(queueMessages.messageId, messageId)))
      await db.close()

      const second = await start({ deliver: async () => new Response('still down', { status: 500 }), retryDelaysMs: [10] })
      await second.q.recover()
      await second.q.idle()
      // Attempts 2 and 3 (its retries), then failed for good.
      expect((await second.rows()).find((r) => r.messageId === messageId)).toMatchObject({ attempt: 3, state: 'failed' })
      await second.stop()
      const third = await start()
      expect(await third.q.recover()).toEqual({ pending: 0, schedules: 0 })
      await third.stop()
    } finally {
      warn.mockRestore()
    }
  })

  it('re-arms schedules from their stored definition and last run', async () => {
    const first = await start()
    await first.q.schedule('tick', '/api/queue/tick', '* * * * * *', { v: 1 })
    await first.q.schedule('tick', '/api/queue/tick', '* * * * * *', { v: 2 }) // same id replaces
    await vi.waitFor(() => expect(first.delivered.length).toBeGreaterThanOrEqual(1), { ...WAIT, interval: 50 })
    await first.q.idle()
    await first.stop()
    const ran = await (async () => {
      const db = await store.open()
      try {
        return await asService(db.db, 'localQueue', (tx) => tx.select().from(queueSchedules))
      } finally {
        await db.close()
      }
    })()
    expect(ran).toEqual([expect.objectContaining({ id: 'tick', path: '/api/queue/tick', cron: '* * * * * *', body: '{"v":2}', lastRunAt: expect.any(Date) })])

    const second = await start()
    expect((await second.q.recover()).schedules).toBe(1)
    await vi.waitFor(() => expect(second.delivered.length).toBeGreaterThanOrEqual(1), { ...WAIT, interval: 50 })
    const tick = second.delivered[0]
    expect(tick).toMatchObject({ path: '/api/queue/tick', body: { v: 2 }, scheduleId: 'tick', valid: true })
    await second.stop()
  })
})

describe('durable in-process queue: its delivery target down, then back (through the fault proxy)', { timeout: 120_000 }, () => {
  let store: Store
  let receiver: Loopback
  let proxy: FaultProxy
  const received: Array<{ path: string; body: string; messageId: string; retried: string; valid: boolean }> = []

  beforeAll(async () => {
    store = await pgliteStore()
    receiver = await listen(
      createServer((req, res) => {
        let body = ''
        req.on('data', (c) => (body += c))
        req.on('end', async () => {
          const valid = await verifier.verify(String(req.headers['upstash-signature'] ?? ''), body, `${PUBLIC}${req.url}`)
          received.push({ path: req.url!, body, messageId: String(req.headers['upstash-message-id']), retried: String(req.headers['upstash-retried']), valid })
          res.writeHead(valid ? 200 : 401).end()
        })
      }),
    )
    proxy = await startFaultProxy({ target: receiver.url, mode: 'http' })
  })
  afterAll(async () => {
    await proxy?.close()
    await receiver?.close()
    await store?.dispose()
  })
  const start = queues(() => store)

  // Each attempt's bound: long enough that a loaded machine answers a passing request within it (else at-least-once
  // delivery rightly sends it again), short enough for the test.
  const ATTEMPT_MS = 1000
  /** What the local server does with a real network hop: the request as signed, to the proxy, bounded in time. */
  const overProxy = async (req: Request) =>
    fetch(`${proxy.url}${new URL(req.url).pathname}`, { method: 'POST', headers: req.headers, body: await req.text(), signal: AbortSignal.timeout(ATTEMPT_MS) })

  it('keeps retrying while refused or blackholed, across a restart, and delivers each message once when the target is back', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    try {
      await proxy.set('refuse')
      const first = await start({ deliver: overProxy, retryDelaysMs: [20] })
      const one = await first.q.publish('/api/queue/one', { n: 1 }, { retries: 20, deduplicationId: 'one' })
      const two = await first.q.publish('/api/queue/two', { n: 2 }, { retries: 20 })
      await vi.waitFor(async () => expect((await first.rows()).every((r) => r.attempt >= 2 && r.state === 'pending')).toBe(true), WAIT)
      await first.stop()

      // Restarted while the target hangs: each attempt ends at the caller's timeout, nothing reaches the target.
      await proxy.set('blackhole')
      const second = await start({ deliver: overProxy, retryDelaysMs: [20] })
      const started = Date.now()
      await second.q.recover()
      await vi.waitFor(async () => expect((await second.rows()).every((r) => r.attempt >= 4)).toBe(true), WAIT)
      // Two attempts each of at most ATTEMPT_MS plus 20 ms apart: well within this (generous for a loaded machine).
      expect(Date.now() - started).toBeLessThan(20_000)
      expect(received).toHaveLength(0)
      expect((await second.rows()).map((r) => r.state)).toEqual(['pending', 'pending'])

      await proxy.set('pass')
      await second.q.idle()
      // Each once (retried messages fall due again in whatever order their retries do, as on QStash).
      expect(received.map((r) => [r.path, JSON.parse(r.body).n, r.messageId]).sort()).toEqual([
        ['/api/queue/one', 1, one.messageId],
        ['/api/queue/two', 2, two.messageId],
      ])
      expect(received.every((r) => r.valid && Number(r.retried) >= 4)).toBe(true)
      expect((await second.rows()).map((r) => r.state)).toEqual(['delivered', 'delivered'])
      // A duplicate after all that is still the same message, delivered no more.
      expect(await second.q.publish('/api/queue/one', { n: 1 }, { deduplicationId: 'one' })).toEqual({ messageId: one.messageId })
      await second.q.idle()
      expect(received).toHaveLength(2)
    } finally {
      warn.mockRestore()
    }
  })
})
