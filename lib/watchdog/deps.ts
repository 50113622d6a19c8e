import type { Config } from '../config'
import type { Services, Mailer, Queue } from '../context'
import type { Db } from '../db/rls'
import { CHECK_TIMEOUT_MS } from '../runtime/probe'
import { MAX_BATCH } from './subrequests'
import type { RuntimeProvider } from '../runtime/provider'
import type { WatchdogSettings } from './rules'

/** What the watchdog's sweep (./sweep.ts) and batches (./batch.ts) share: its path, lease and dependencies (its bounds: ./subrequests.ts). */
export const WATCHDOG_PATH = '/api/cron/watchdog'
/** The production and local schedule (QStash cron syntax): every 2 minutes, the spec's check interval. */
export const WATCHDOG_CRON = '*/2 * * * *'
/** The cron's period: a sweep's run (functions/cron/continuation.ts) is the period it started in. */
export const WATCHDOG_PERIOD_MS = 2 * 60_000
/**
 * The longest a provider's repair takes: Railway's is two API calls (service lookup, redeploy), each bounded by
 * lib/runtime/railway.ts `RAILWAY_TIMEOUT_MS` (15 s; not imported, to keep the provider out of bundles without it).
 */
const REPAIR_MS = 30_000
/** The rest of a batch: the lease and record transactions, the probe-cache drops, the crash-loop mails. */
const LEASE_MARGIN_MS = 30_000

/**
 * How long a batch holds its agents: every step of the batch at its worst, so no other delivery takes an agent a
 * batch still works on. The batch probes its agents `concurrency` at a time, then repairs those that need it at the
 * same bound (at worst all of them): ceil(batch / concurrency) rounds of a check at its longest (lib/runtime/probe.ts
 * `checkRuntime`: `/api/status`, then the legacy probes) and of a repair, plus a margin. With the defaults (100
 * agents, 25 at once) 4 × (10 s + 30 s) + 30 s = 190 s. A batch that dies early
 * leaves its agents unwatched that long at most; the next sweep after the lease takes them over.
 */
export function leaseMs(s: Pick<WatchdogSettings, 'batchSize' | 'concurrency'>): number {
  const rounds = Math.ceil(Math.min(s.batchSize, MAX_BATCH) / s.concurrency)
  return rounds * (CHECK_TIMEOUT_MS + REPAIR_MS) + LEASE_MARGIN_MS
}
/** Agent statuses the watchdog looks after: the runtime is meant to be up. */
export const WATCHED = ['starting', 'running']

export interface WatchdogDeps {
  readonly db: Db
  readonly config: Config
  readonly queue: Queue
  readonly mail: Mailer
  /** Where the instance's cached probe lives (lib/agents/instance.ts), dropped around a repair. */
  readonly kv: Services['kv']
  /** `repair` for unhealthy runtimes; `stop` for the runtimes of agents suspended by the reconciliation. */
  readonly runtimes: Pick<RuntimeProvider, 'repair' | 'stop'>
  /** The clock every rule reads (epoch ms); tests control it. */
  now(): number
}

/** The request's services as the watchdog's dependencies; each store is still made on first use. */
export function watchdogDeps(services: Services, overrides: Partial<WatchdogDeps> = {}): WatchdogDeps {
  return {
    get db() {
      return overrides.db ?? services.db
    },
    get config() {
      return overrides.config ?? services.config
    },
    get queue() {
      return overrides.queue ?? services.queue
    },
    get mail() {
      return overrides.mail ?? services.mail
    },
    get kv() {
      return overrides.kv ?? services.kv
    },
    get runtimes() {
      return overrides.runtimes ?? services.runtimes
    },
    now: overrides.now ?? Date.now,
  }
}

/** Batches share one flow-control key: at most `parallelBatches` run at once, whatever the number of agents. */
export const flow = (s: WatchdogSettings) => ({ key: 'watchdog', parallelism: s.parallelBatches })

/** `fn` over `items` with at most `limit` in flight; results in the items' order. */
export async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const i = next++
      results[i] = await fn(items[i])
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return results
}
