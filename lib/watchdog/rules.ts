import type { Config } from '../config'
import type { RuntimeStatus } from '../runtime/probe'

/**
 * The watchdog's rules (spec 2 "Watchdog lifecycle"), as one pure function of an agent's watchdog row, the
 * probe's answer and the time: what the row becomes, and whether to repair the runtime or mail the owner.
 *
 * States: `healthy`; `degraded` (a probe failed: re-probed every degraded interval); `repairing` (a repair was
 * requested through the provider; re-probed as degraded); `crash_loop` (too many crashes in the window: no more
 * repairs, the owner mailed once, probed at the normal interval until it recovers). The agent not running is
 * the spec's `stopped`: such agents are never swept.
 *
 * A crash is the runtime failing after a healthy probe (the first failure of an episode). Consecutive failures
 * reaching the startup-failure threshold ask for a repair, at most the maximum of repairs per episode (a
 * healthy probe ends the episode and resets the counters); crashes inside the crash-loop window reaching its
 * threshold stop repairs altogether.
 */
export const WATCHDOG_STATES = ['healthy', 'degraded', 'repairing', 'crash_loop'] as const
export type WatchdogState = (typeof WATCHDOG_STATES)[number]

/** Probe answers that mean the runtime is up (`setup`: up, waiting for its owner's configuration). */
export const ALIVE: ReadonlySet<RuntimeStatus> = new Set(['running', 'healthy', 'setup'])

export interface WatchdogSettings {
  checkIntervalMs: number
  degradedCheckIntervalMs: number
  startupFailureThreshold: number
  maxRepairAttempts: number
  crashLoopWindowMs: number
  crashLoopThreshold: number
  batchSize: number
  concurrency: number
  parallelBatches: number
}

export const watchdogSettings = (config: Config): WatchdogSettings => ({
  checkIntervalMs: config.WATCHDOG_CHECK_INTERVAL * 1000,
  degradedCheckIntervalMs: config.WATCHDOG_DEGRADED_CHECK_INTERVAL * 1000,
  startupFailureThreshold: config.WATCHDOG_STARTUP_FAILURE_THRESHOLD,
  maxRepairAttempts: config.WATCHDOG_MAX_REPAIR_ATTEMPTS,
  crashLoopWindowMs: config.WATCHDOG_CRASH_LOOP_WINDOW * 1000,
  crashLoopThreshold: config.WATCHDOG_CRASH_LOOP_THRESHOLD,
  batchSize: config.WATCHDOG_BATCH_SIZE,
  concurrency: config.WATCHDOG_CONCURRENCY,
  parallelBatches: config.WATCHDOG_PARALLEL_BATCHES,
})

/** The part of an `agent_watchdog` row the rules read. */
export interface WatchdogRow {
  state: string
  consecutiveFailures: number
  repairAttempts: number
  crashTimes: number[]
  lastProbeAt: Date | null
  ownerNotifiedAt: Date | null
}

export interface Decision {
  state: WatchdogState
  reason: string | null
  consecutiveFailures: number
  repairAttempts: number
  crashTimes: number[]
  nextCheckAt: Date
  /** Clear `ownerNotifiedAt`: the agent recovered and no crash is left in the window. */
  clearNotified: boolean
  alive: boolean
  repair: boolean
  notify: boolean
}

export function decide(row: WatchdogRow, probe: { status: RuntimeStatus; statusReason: string | null }, now: number, s: WatchdogSettings): Decision {
  const crashTimes = row.crashTimes.filter((t) => Number.isFinite(t) && t > now - s.crashLoopWindowMs)
  const at = (ms: number) => new Date(now + ms)
  if (ALIVE.has(probe.status)) {
    return {
      state: 'healthy',
      reason: probe.status === 'setup' ? probe.statusReason : null,
      consecutiveFailures: 0,
      repairAttempts: 0,
      crashTimes,
      nextCheckAt: at(s.checkIntervalMs),
      clearNotified: row.ownerNotifiedAt !== null && crashTimes.length === 0,
      alive: true,
      repair: false,
      notify: false,
    }
  }
  const failures = row.consecutiveFailures + 1
  const what = `${probe.status}${probe.statusReason ? `: ${probe.statusReason}` : ''}`
  if (row.state === 'healthy' && row.lastProbeAt !== null) crashTimes.push(now)
  const base = { consecutiveFailures: failures, repairAttempts: row.repairAttempts, crashTimes, clearNotified: false, alive: false, repair: false, notify: false }

  if (row.state === 'crash_loop' || crashTimes.length >= s.crashLoopThreshold) {
    const minutes = Math.round(s.crashLoopWindowMs / 60_000)
    return {
      ...base,
      state: 'crash_loop',
      reason: `${crashTimes.length} crashes within ${minutes} min: repairs stopped (${what})`,
      nextCheckAt: at(s.checkIntervalMs),
      notify: row.ownerNotifiedAt === null,
    }
  }
  if (failures >= s.startupFailureThreshold) {
    if (row.repairAttempts < s.maxRepairAttempts) {
      const attempt = row.repairAttempts + 1
      return {
        ...base,
        state: 'repairing',
        reason: `Repair ${attempt} of ${s.maxRepairAttempts} after ${failures} failed probes (${what})`,
        consecutiveFailures: 0,
        repairAttempts: attempt,
        nextCheckAt: at(s.degradedCheckIntervalMs),
        repair: true,
      }
    }
    return {
      ...base,
      state: 'degraded',
      reason: `Repair attempts exhausted (${s.maxRepairAttempts}): ${failures} failed probes (${what})`,
      nextCheckAt: at(s.checkIntervalMs),
    }
  }
  // After a repair, the runtime is given the threshold's probes to come back before the next one.
  return { ...base, state: row.state === 'repairing' ? 'repairing' : 'degraded', reason: what, nextCheckAt: at(s.degradedCheckIntervalMs) }
}
