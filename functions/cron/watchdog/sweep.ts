import { and, eq, gt, inArray, isNull, lte, or } from 'drizzle-orm'
import { asService } from '../../../lib/db/rls'
import { errorFields, log } from '../../../lib/log'
import { continuationId, runOf } from '../continuation'
import { agents, agentWatchdog } from '../../../schema'
import { checkAgents } from './batch'
import { reconcileAccess } from './reconcile'
import { flow, mapLimit, WATCHDOG_PATH, WATCHDOG_PERIOD_MS, WATCHED, type WatchdogDeps } from '../../../lib/watchdog/deps'
import { BATCHES_PER_PAGE, MAX_BATCH } from '../../../lib/watchdog/subrequests'
import { watchdogSettings } from '../../../lib/watchdog/rules'

/**
 * The watchdog (spec 2 "Watchdog lifecycle"), driven by the queue: a cron delivery to `WATCHDOG_PATH` with an
 * empty body starts a sweep, which pages the agents due a check and publishes them in batches (`{agentIds}`) to
 * the same path, plus a continuation (`{cursor}`) when there are more than one page; each batch delivery leases
 * its agents, probes them with bounded concurrency and applies the rules (lib/watchdog/rules.ts). Degraded agents
 * come back as a delayed batch after the degraded interval. Every invocation does a bounded amount of work, so
 * the sweep scales past one Worker invocation; the leases make overlapping deliveries harmless. Batches share a
 * flow-control key (`WATCHDOG_PARALLEL_BATCHES` in flight): probes in flight stay bounded however many agents.
 */

export interface SweepResult {
  /** Agents suspended by this sweep's reconciliation of paid access (its first page only). */
  suspended: number
  /** Agents found due a check. */
  due: number
  /** Batch messages published. */
  batches: number
  /** A continuation was published (more than one page was due). */
  more: boolean
}

/**
 * One delivery to `WATCHDOG_PATH`: a batch when it names agents; the reconciliation of paid access for the users a
 * payment event concerns when it names users (functions/cron/watchdog/reconcile.ts); else a sweep (from `cursor` when given).
 */
export async function runWatchdog(deps: WatchdogDeps, body: { agentIds?: string[]; userIds?: string[]; cursor?: string; run?: string }) {
  if (body.agentIds) return { kind: 'batch' as const, ...(await checkAgents(deps, body.agentIds)) }
  if (body.userIds) return { kind: 'reconcile' as const, ...(await reconcileAccess(deps, { userIds: body.userIds })) }
  return { kind: 'sweep' as const, ...(await sweep(deps, body.cursor, body.run)) }
}

/**
 * Reconciles paid access first (the run's first page: every cron period, so a lapse stops its runtimes within one
 * watchdog interval), then pages the agents due a check (no watchdog row yet, or its next check passed; not leased)
 * and publishes them. `run` is the sweep's start (the cron delivery's period), carried by its continuations, which
 * it deduplicates.
 */
export async function sweep(deps: WatchdogDeps, cursor?: string, run = runOf(deps.now(), WATCHDOG_PERIOD_MS)): Promise<SweepResult> {
  // A reconciliation that fails must not stop the health checks: it is retried by the next sweep.
  const suspended = cursor
    ? 0
    : await reconcileAccess(deps).then(
        (r) => r.suspended,
        (e) => {
          log.error('watchdog.reconcile_failed', errorFields(e))
          return 0
        },
      )
  const s = watchdogSettings(deps.config)
  const now = new Date(deps.now())
  const page = s.batchSize * BATCHES_PER_PAGE
  // Keyset paging: each page starts past the cursor on both sides of the join. The bound on `agent_watchdog` is
  // implied by the join, but Postgres does not carry a range through an equality: without it the merge join walks
  // `agent_watchdog` from its first row up to the cursor on every page, so a sweep's pages cost O(n²) in all
  // (measured on PGlite, 100k agents with watchdog rows: a page from the middle 100 ms, 27 ms with the bound).
  const rows = await asService(deps.db, 'watchdog', (tx) =>
    tx
      .select({ id: agents.id })
      .from(agents)
      .leftJoin(agentWatchdog, and(eq(agentWatchdog.agentId, agents.id), cursor ? gt(agentWatchdog.agentId, cursor) : undefined))
      .where(
        and(
          inArray(agents.status, WATCHED),
          or(isNull(agentWatchdog.nextCheckAt), lte(agentWatchdog.nextCheckAt, now)),
          or(isNull(agentWatchdog.leaseUntil), lte(agentWatchdog.leaseUntil, now)),
          cursor ? gt(agents.id, cursor) : undefined,
        ),
      )
      .orderBy(agents.id)
      .limit(page),
  )
  const ids = rows.map((r) => r.id)
  const batches = chunk(ids, Math.min(s.batchSize, MAX_BATCH))
  await mapLimit(batches, 8, (agentIds) => deps.queue.publish(WATCHDOG_PATH, { agentIds }, { flowControl: flow(s) }))
  const more = ids.length === page
  if (more) {
    const next = ids[ids.length - 1]
    await deps.queue.publish(WATCHDOG_PATH, { cursor: next, run }, { deduplicationId: continuationId(WATCHDOG_PATH, run, next) })
  }
  log.info('watchdog.sweep', { suspended, due: ids.length, batches: batches.length, more })
  return { suspended, due: ids.length, batches: batches.length, more }
}

const chunk = <T>(items: T[], size: number) => Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size))
