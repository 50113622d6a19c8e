// The watchdog sweep at scale: running agents whose runtimes are a few fake runtimes on loopback
// (tests/support/fake-runtime.ts, answering the documented healthy probes, in a process of their own as the embedded
// default's runtimes are: bench/fake-runtimes.ts). Each sweep goes the production way: a signed
// cron delivery to /api/cron/watchdog, which pages the due agents and publishes batches through the in-process queue;
// the batches are delivered back (signed), lease, probe and record. Timed from the cron delivery until the queue is
// idle, then checked: every agent probed once, none failed. The sizes grow in one database (each sweep after the
// first finds the earlier agents' rows and checks the new ones for the first time).
//
// Printed per size, all measured in the same run: seconds and ms per agent; the per-agent time against the smallest
// size's (1.00 is linear); the sweep's share of the cron interval (WATCHDOG_PERIOD_MS); and what the sweep costs per
// 1k agents: queue messages published, database round trips (statements sent, transactions' BEGIN/COMMIT included)
// and the subrequests a Worker would make (probe fetches, queue publishes, one database connection per delivery),
// with the most any one delivery made (a Worker's limit applies per invocation), and the process's CPU time per
// delivery (an upper bound of a delivery's own: it includes the embedded database). The in-process queue's outbox writes
// (what QStash does in production) are counted apart.
//
// `npx tsx bench/watchdog.ts [sizes…]` (default 1000 10000; part of `npm run bench`), `npm run bench:watchdog` for 100k;
// STATEMENT_TIMES=1 adds where PGlite's time went, by statement.
import { PGlite } from '@electric-sql/pglite'
import { and, count, gte, sql } from 'drizzle-orm'
import { AsyncLocalStorage } from 'node:async_hooks'
import { fork } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { createWebApp } from '../functions/web'
import type { LocalQueue } from '../infra/local-queue'
import { createNodeServices } from '../infra/services'
import { asService, withUser } from '../lib/db/rls'
import { WATCHDOG_PATH, WATCHDOG_PERIOD_MS } from '../lib/watchdog/deps'
import { agentEvents, agents, agentWatchdog, users } from '../schema'

const SIZES = [1000, 10_000]
const RUNTIMES = 4
const USERS = 50

/** A Parse or Query message's SQL text, whitespace folded, parameters elided, cut at 100 characters. */
function statementText(msg: Uint8Array) {
  let i = 5 // the message's type and length
  if (msg[0] === 0x50) while (msg[i++]); // Parse: the statement's name first
  const end = msg.indexOf(0, i)
  return new TextDecoder().decode(msg.subarray(i, Math.min(end < 0 ? msg.length : end, i + 400))).replace(/\s+/g, ' ').replace(/\$\d+/g, '$').trim().slice(0, 100)
}

/** The fake runtimes in a child process (bench/fake-runtimes.ts): their CPU is not the platform's. */
async function startFakeRuntimes(count: number) {
  // The same loader as this process (tsx), without a profiler's flags.
  const child = fork(new URL('./fake-runtimes.ts', import.meta.url).pathname, [String(count)], { execArgv: process.execArgv.filter((a) => !a.startsWith('--cpu-prof')) })
  const urls = await new Promise<string[]>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { urls: string[] }).urls))
    child.once('exit', (code) => reject(new Error(`the fake runtimes exited (${code})`)))
  })
  return { urls, close: () => new Promise<void>((resolve) => (child.once('exit', () => resolve()), child.disconnect())) }
}

/** What one delivery (or the bench itself, outside any) sent out. */
interface Tally {
  statements: number
  fetches: number
  publishes: number
}
const zero = (): Tally => ({ statements: 0, fetches: 0, publishes: 0 })

export async function watchdogSweeps(sizes = SIZES) {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-watchdog-'))
  const env = { LOG_REQUESTS: '0', ...process.env, DATA_DIR: dataDir, APP_VERSION: 'v0.0.0-bench' }
  const node = await createNodeServices({ env })
  const web = createWebApp(node.provider)
  // Each delivery counts what it sends: statements (PGlite's protocol: a Parse or a simple Query message each), fetches
  // (the probes) and publishes. The bench's own setup and checks run outside any delivery and are not counted.
  const delivery = new AsyncLocalStorage<Tally>()
  let counting = false
  const deliveries: Tally[] = []
  node.setDeliver((req) => {
    if (!counting) return Promise.resolve(web.fetch(req))
    const t = zero()
    deliveries.push(t)
    return delivery.run(t, () => Promise.resolve(web.fetch(req)))
  })
  const queue = node.services.queue as LocalQueue
  const { db, config } = node.services
  const proto = PGlite.prototype as unknown as { execProtocolStream: (msg: Uint8Array, ...rest: unknown[]) => unknown }
  const execProtocolStream = proto.execProtocolStream
  // STATEMENT_TIMES=1: PGlite's time by statement (its text up to the first 100 characters, parameters elided),
  // summed over the sweeps and printed at the end: where the database's share of a sweep goes.
  const byStatement = process.env.STATEMENT_TIMES === '1' ? new Map<string, { ms: number; count: number }>() : undefined
  let statement = ''
  proto.execProtocolStream = function (msg, ...rest) {
    const t = delivery.getStore()
    const opens = msg[0] === 0x50 || msg[0] === 0x51 // 'P' (Parse), 'Q' (Query)
    if (t && opens) t.statements++
    if (!byStatement || !counting) return execProtocolStream.call(this, msg, ...rest)
    if (opens) statement = statementText(msg) + (t === bookkeeping ? ' (the queue outbox)' : '')
    const key = statement // a Bind/Execute/Sync goes to the statement its Parse opened
    const started = performance.now()
    const tally = () => {
      const e = byStatement.get(key) ?? { ms: 0, count: 0 }
      e.ms += performance.now() - started
      if (opens) e.count++
      byStatement.set(key, e)
    }
    const answer = execProtocolStream.call(this, msg, ...rest)
    if (answer instanceof Promise) return answer.finally(tally)
    tally()
    return answer
  }
  const fetch = globalThis.fetch
  globalThis.fetch = (...args) => {
    const t = delivery.getStore()
    if (t) t.fetches++
    return fetch(...args)
  }
  const publish = queue.publish.bind(queue)
  queue.publish = (...args) => {
    const t = delivery.getStore()
    if (t) t.publishes++
    return publish(...args)
  }
  // The in-process queue's own bookkeeping (its outbox in the app's database) stands for QStash: counted apart.
  const bookkeeping = zero()
  const outbox = (queue as unknown as { opts: { outbox?: Record<string, (...a: unknown[]) => Promise<unknown>> } }).opts.outbox
  for (const [name, fn] of Object.entries(outbox ?? {})) outbox![name] = (...a) => delivery.run(counting ? bookkeeping : zero(), () => fn(...a))
  const fakes = await startFakeRuntimes(RUNTIMES)
  // The batch logs (one line per batch) would drown the figures.
  const write = process.stdout.write.bind(process.stdout)
  const writeErr = process.stderr.write.bind(process.stderr)
  const drop = (to: typeof write) => ((chunk: string | Uint8Array, ...rest: never[]) => (String(chunk).includes('"event":"watchdog.') ? true : to(chunk, ...rest))) as typeof write
  const quiet = () => ((process.stdout.write = drop(write)), (process.stderr.write = drop(writeErr)))

  try {
    // Owners on the network plan (unlimited agents): the sweep's reconciliation of paid access suspends nothing.
    const owners = await asService(db, 'signIn', (tx) =>
      tx
        .insert(users)
        .values(Array.from({ length: USERS }, (_, i) => ({ email: `bench-watchdog-${i}-${Date.now()}@example.com`, name: `Bench ${i}`, plan: 'network', subscriptionStatus: 'active' })))
        .returning({ id: users.id }),
    )
    console.log(
      `watchdog sweep (${availableParallelism()} cores, db=${node.adapters.db}, ${RUNTIMES} fake runtimes on loopback in their own process, batch ${config.WATCHDOG_BATCH_SIZE}, ` +
        `${config.WATCHDOG_CONCURRENCY} probes in flight per batch, ${config.WATCHDOG_PARALLEL_BATCHES} batches at once; interval ${WATCHDOG_PERIOD_MS / 1000} s):`,
    )
    write(`  ${'agents'.padStart(7)} ${'s'.padStart(7)} ${'ms/agent'.padStart(9)} ${'vs first'.padStart(9)} ${'of interval'.padStart(12)}   per 1k agents: messages, db round trips, subrequests; most in one delivery\n`)
    quiet()
    let seeded = 0
    let first: number | undefined
    const invalid: string[] = []
    for (const n of sizes) {
      // Top the agents up to n, spread over the users and the fake runtimes.
      for (const [u, owner] of owners.entries()) {
        const rows: Array<typeof agents.$inferInsert> = []
        for (let i = seeded + u; i < n; i += USERS) rows.push({ userId: owner.id, name: `agent-${i}`, plan: 'network', status: 'running', runtimeUrl: fakes.urls[i % RUNTIMES] })
        for (let i = 0; i < rows.length; i += 500) await withUser(db, owner.id, (tx) => tx.insert(agents).values(rows.slice(i, i + 500)))
      }
      seeded = n
      // The tables as a server running with these agents keeps them (VACUUM (ANALYZE) every
      // PGLITE_MAINTENANCE_INTERVAL_MS: PGlite has no autovacuum); without, the sweep's pages are planned for an empty table.
      await node.maintainDatabase()
      // Every agent due now.
      await asService(db, 'watchdog', (tx) => tx.update(agentWatchdog).set({ nextCheckAt: null }))
      deliveries.length = 0
      Object.assign(bookkeeping, zero())
      counting = true
      const start = new Date()
      const cpu = process.cpuUsage()
      const t = performance.now()
      await queue.publish(WATCHDOG_PATH, {})
      await queue.idle()
      const ms = performance.now() - t
      const cpuMs = ((c) => (c.user + c.system) / 1000)(process.cpuUsage(cpu))
      counting = false
      const [{ probed }] = await asService(db, 'watchdog', (tx) => tx.select({ probed: count() }).from(agentWatchdog).where(gte(agentWatchdog.lastProbeAt, start)))
      const [{ healthy }] = await asService(db, 'watchdog', (tx) => tx.select({ healthy: count() }).from(agentWatchdog).where(sql`${agentWatchdog.state} = 'healthy'`))
      // A probe that timed out under load would show as a degraded agent, re-probed 5 s later: none may.
      const [{ events }] = await asService(db, 'watchdog', (tx) => tx.select({ events: count() }).from(agentEvents).where(and(gte(agentEvents.at, start), sql`${agentEvents.toState} <> 'healthy'`)))

      const perAgent = ms / n
      first ??= perAgent
      // The cron delivery itself is a message too (QStash's schedule publishes it).
      const total = deliveries.reduce((a, d) => ({ statements: a.statements + d.statements, fetches: a.fetches + d.fetches, publishes: a.publishes + d.publishes }), zero())
      const messages = total.publishes + 1
      // A Worker's subrequests: its fetches, its publishes (QStash calls) and its database connection.
      const sub = (d: Tally) => d.fetches + d.publishes + 1
      const subrequests = deliveries.reduce((a, d) => a + sub(d), 0)
      const most = deliveries.reduce((m, d) => ({ statements: Math.max(m.statements, d.statements), sub: Math.max(m.sub, sub(d)) }), { statements: 0, sub: 0 })
      const k = (x: number) => ((x * 1000) / n).toFixed(0)
      write(
        `  ${String(n).padStart(7)} ${(ms / 1000).toFixed(2).padStart(7)} ${perAgent.toFixed(3).padStart(9)} ${(perAgent / first).toFixed(2).padStart(9)} ${((ms / WATCHDOG_PERIOD_MS) * 100).toFixed(1).padStart(11)}%` +
          `   ${k(messages)} messages, ${k(total.statements)} db round trips${node.adapters.db === 'pglite' ? '' : ' (not counted off PGlite)'}, ${k(subrequests)} subrequests;` +
          ` one delivery: ${most.statements} db round trips, ${most.sub} subrequests (${deliveries.length} deliveries;` +
          ` the in-process queue's outbox: ${k(bookkeeping.statements)} db round trips per 1k);` +
          ` CPU ${(cpuMs / deliveries.length).toFixed(0)} ms a delivery (the whole process's, PGlite included)\n`,
      )
      if (events) {
        const reasons = await asService(db, 'watchdog', (tx) => tx.select({ reason: agentEvents.reason }).from(agentEvents).where(and(gte(agentEvents.at, start), sql`${agentEvents.toState} <> 'healthy'`)).limit(3))
        write(`  ${events} failed probes (their agents re-probed as degraded: the figures above include that), e.g.: ${reasons.map((r) => r.reason).join(' | ')}\n`)
      }
      // A sweep that missed an agent or saw a probe fail measured something else: said, and the run ends in failure
      // once every size has printed its figures.
      if (probed !== n || healthy !== n || events !== 0) invalid.push(`sweep of ${n}: ${probed} probed, ${healthy} healthy, ${events} failed probes`)
    }
    if (byStatement) {
      write('  PGlite time by statement, all sizes:\n')
      for (const [text, e] of [...byStatement].sort((a, b) => b[1].ms - a[1].ms).slice(0, 15)) write(`  ${e.ms.toFixed(0).padStart(7)} ms ${String(e.count).padStart(6)} × ${text}\n`)
    }
    if (invalid.length) throw new Error(invalid.join('; '))
  } finally {
    process.stdout.write = write
    process.stderr.write = writeErr
    proto.execProtocolStream = execProtocolStream
    globalThis.fetch = fetch
    await fakes.close()
    await node.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const sizes = process.argv.slice(2).map(Number)
  if (sizes.some((n) => !Number.isInteger(n) || n <= 0)) throw new Error('usage: tsx bench/watchdog.ts [agents…]')
  await watchdogSweeps(sizes.length ? sizes : undefined)
  process.exit(0)
}
