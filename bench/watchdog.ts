// The watchdog sweep at scale (issue #12): 1k, 5k and 10k running agents whose runtimes are a few fake runtimes on
// loopback (tests/support/fake-runtime.ts, answering the documented healthy probes). Each sweep goes the production
// way: a signed cron delivery to /api/cron/watchdog, which pages the due agents and publishes batches through the
// in-process queue; the batches are delivered back (signed), lease, probe and record. Timed from the cron delivery
// until the queue is idle, then checked: every agent probed once. Goal: 10k well inside one 120 s interval, linear.
// `npx tsx bench/watchdog.ts` alone, or part of `npm run bench`.
import { and, count, gte, sql } from 'drizzle-orm'
import { mkdtempSync, rmSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { createWebApp } from '../functions/web'
import type { LocalQueue } from '../infra/local-queue'
import { createNodeServices } from '../infra/services'
import { asService, withUser } from '../lib/db/rls'
import { WATCHDOG_PATH } from '../lib/watchdog/deps'
import { agentEvents, agents, agentWatchdog, users } from '../schema'
import { HEALTHY, startFakeRuntime } from '../tests/support/fake-runtime'

const SIZES = [1000, 5000, 10_000]
const RUNTIMES = 4
const USERS = 50

export async function watchdogSweeps() {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-watchdog-'))
  const env = { LOG_REQUESTS: '0', ...process.env, DATA_DIR: dataDir, APP_VERSION: 'v0.0.0-bench' }
  const node = await createNodeServices({ env })
  const web = createWebApp(node.provider)
  node.setDeliver((req) => Promise.resolve(web.fetch(req)))
  const queue = node.services.queue as LocalQueue
  const { db, config } = node.services
  const fakes = await Promise.all(
    Array.from({ length: RUNTIMES }, () => startFakeRuntime({ '/healthz': HEALTHY.healthz, '/readyz': HEALTHY.readyz, '/api/status': HEALTHY.status() })),
  )
  // The batch logs (one line per batch) would drown the figures.
  const write = process.stdout.write.bind(process.stdout)
  const writeErr = process.stderr.write.bind(process.stderr)
  const drop = (to: typeof write) => ((chunk: string | Uint8Array, ...rest: never[]) => (String(chunk).includes('"event":"watchdog.') ? true : to(chunk, ...rest))) as typeof write
  const quiet = () => ((process.stdout.write = drop(write)), (process.stderr.write = drop(writeErr)))

  try {
    const owners = await asService(db, 'signIn', (tx) =>
      tx.insert(users).values(Array.from({ length: USERS }, (_, i) => ({ email: `bench-watchdog-${i}-${Date.now()}@example.com`, name: `Bench ${i}` }))).returning({ id: users.id }),
    )
    console.log(`watchdog sweep (${availableParallelism()} cores, db=${node.adapters.db}, ${RUNTIMES} fake runtimes on loopback, batch ${config.WATCHDOG_BATCH_SIZE}, ${config.WATCHDOG_CONCURRENCY} probes in flight per batch):`)
    quiet()
    let seeded = 0
    for (const n of SIZES) {
      // Top the agents up to n, spread over the users and the fake runtimes.
      for (const [u, owner] of owners.entries()) {
        const rows: Array<typeof agents.$inferInsert> = []
        for (let i = seeded + u; i < n; i += USERS) rows.push({ userId: owner.id, name: `agent-${i}`, plan: 'network', status: 'running', runtimeUrl: fakes[i % RUNTIMES].url })
        for (let i = 0; i < rows.length; i += 500) await withUser(db, owner.id, (tx) => tx.insert(agents).values(rows.slice(i, i + 500)))
      }
      seeded = n
      // Every agent due now.
      await asService(db, 'watchdog', (tx) => tx.update(agentWatchdog).set({ nextCheckAt: null }))
      const start = new Date()
      const t = performance.now()
      await queue.publish(WATCHDOG_PATH, {})
      await queue.idle()
      const ms = performance.now() - t
      const [{ probed }] = await asService(db, 'watchdog', (tx) => tx.select({ probed: count() }).from(agentWatchdog).where(gte(agentWatchdog.lastProbeAt, start)))
      const [{ healthy }] = await asService(db, 'watchdog', (tx) => tx.select({ healthy: count() }).from(agentWatchdog).where(sql`${agentWatchdog.state} = 'healthy'`))
      // A probe that timed out under load would show as a degraded agent, re-probed 5 s later: none may.
      const [{ events }] = await asService(db, 'watchdog', (tx) => tx.select({ events: count() }).from(agentEvents).where(and(gte(agentEvents.at, start), sql`${agentEvents.toState} <> 'healthy'`)))
      if (events) {
        const reasons = await asService(db, 'watchdog', (tx) => tx.select({ reason: agentEvents.reason }).from(agentEvents).where(and(gte(agentEvents.at, start), sql`${agentEvents.toState} <> 'healthy'`)).limit(3))
        write(`  failed probes, e.g.: ${reasons.map((r) => r.reason).join(' | ')}\n`)
      }
      if (probed !== n || healthy !== n || events !== 0) throw new Error(`sweep of ${n}: ${probed} probed, ${healthy} healthy, ${events} failed probes`)
      write(`  ${String(n).padStart(6)} agents  ${(ms / 1000).toFixed(2).padStart(6)} s   ${(ms / n).toFixed(2)} ms per agent   (goal: well inside 120 s)\n`)
    }
  } finally {
    process.stdout.write = write
    process.stderr.write = writeErr
    await Promise.all(fakes.map((f) => f.close()))
    await node.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await watchdogSweeps()
  process.exit(0)
}
