// What one Worker invocation of the watchdog may spend (the paid plan's 1,000 subrequests), and the bounds that keep
// its batches and its sweep's reconciliation within it (tests/families/cron/limits.test.ts). Imports nothing: the
// configuration's bound on WATCHDOG_BATCH_SIZE is read from here.

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
