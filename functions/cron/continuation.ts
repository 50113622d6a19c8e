/**
 * Paged crons (the watchdog's sweep, the heartbeat sync) hand the rest of a run to a `{cursor, run}` continuation.
 * The queue delivers at least once: a retried delivery that had already published its continuation publishes it
 * again, which would start a second chain. The continuation's deduplication id is the path, the run (when the cron
 * delivery started it, to its period) and the cursor: the same for a retry, different for the next run.
 */
export const RUN_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/

/** The run a cron delivery at `now` starts: the start of its period, as an ISO minute (`2026-03-02T10:00`). */
export const runOf = (now: number, periodMs: number) => new Date(Math.floor(now / periodMs) * periodMs).toISOString().slice(0, 16)

/** The continuation's deduplication id (QStash `Upstash-Deduplication-Id`): path, run and cursor, header-safe. */
export const continuationId = (path: string, run: string, cursor: string) => `${path}|${run}|${cursor}`.replace(/[^A-Za-z0-9._:|-]/g, '_')
