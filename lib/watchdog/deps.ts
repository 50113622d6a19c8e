import type { Config } from '../config'
import type { Services, Mailer, Queue } from '../context'
import type { Db } from '../db/rls'
import { CHECK_TIMEOUT_MS } from '../runtime/probe'
import type { RuntimeProvider } from '../runtime/provider'
import type { WatchdogSettings } from './rules'

/** What the watchdog's sweep (./sweep.ts) and batches (./batch.ts) share: its path, bounds, lease and dependencies. */
export const WATCHDOG_PATH = '/api/cron/watchdog'
/** The production and local schedule (QStash cron syntax): every 2 minutes, the spec's check interval. */
export const WATCHDOG_CRON = '*/2 * * * *'
/** The cron's period: a sweep's run (functions/cron/continuation.ts) is the period it started in. */
export const WATCHDOG_PERIOD_MS = 2 * 60_000
/** The subrequests one Worker invocation may make (the paid plan's limit); a batch or a sweep page is one invocation. */
export const WORKER_SUBREQUESTS = 1_000
/**
 * The most subrequests one agent costs a batch: its check (`/api/status`, then `/healthz` and `/readyz` when that
 * does not decide: 3), its repair (the cached probe dropped before and after: 2 kv commands; the provider's repair:
 * Railway's service lookup and redeploy, 2) and its crash-loop mail (1 request to the mail provider).
 */
export const AGENT_SUBREQUESTS = 8
/** What a batch costs whatever its size: its database connection (its transactions run one after another) and one publish. */
const BATCH_SUBREQUESTS = 2
/**
 * Agents one batch message may name (the receiver's bound; WATCHDOG_BATCH_SIZE is at most this): as many as keep a
 * batch whose every agent fails, is repaired and mailed within a Worker's subrequests: (1,000 − 2) / 8 = 124.
 */
export const MAX_BATCH = Math.floor((WORKER_SUBREQUESTS - BATCH_SUBREQUESTS) / AGENT_SUBREQUESTS)
/** Batches one sweep invocation publishes before handing the rest to a continuation message. */
export const BATCHES_PER_PAGE = 20
/**
 * The most subrequests one suspension costs the sweep's reconciliation: the cached probe dropped before and after
 * (2 kv commands) and the provider's stop (Railway's service lookup, latest deployment and stop: 3).
 */
const SUSPENSION_SUBREQUESTS = 5
/**
 * Agents one reconciliation run suspends at most, so the sweep's invocation stays within a Worker's subrequests
 * beside its page (its batches' publishes, the continuation's, its database connection): (1,000 − 22) / 5 = 195.
 * The rest are taken by the next run.
 */
export const MAX_SUSPENSIONS = Math.floor((WORKER_SUBREQUESTS - BATCHES_PER_PAGE - 2) / SUSPENSION_SUBREQUESTS)
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
