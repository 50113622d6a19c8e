import { z } from '@hono/zod-openapi'
import { tallyField } from '../../lib/http/fields'
import { RUN_PATTERN } from './continuation'
import { MAX_BATCH } from '../../lib/watchdog/subrequests'

const agentId = z.string().min(1).max(100)

/** A continuation's run: when the cron delivery started it (deduplicates the continuations of a retried delivery). */
export const ContinuationRun = z
  .string()
  .max(16)
  .regex(RUN_PATTERN)
  .optional()
  .openapi({ description: "A continuation: the run's start (ISO minute of its cron period), which deduplicates its continuations", example: '2026-03-02T10:00' })

export const WatchdogMessage = z
  .object({
    agentIds: z.array(agentId).min(1).max(MAX_BATCH).optional().openapi({ description: 'A batch: check these agents (those due and not leased elsewhere)' }),
    userIds: z
      .array(agentId)
      .min(1)
      .max(MAX_BATCH)
      .optional()
      .openapi({ description: 'Reconcile these users’ paid access now (a payment event): suspend the agents of a user without it, and those past the plan’s count' }),
    cursor: agentId.optional().openapi({ description: 'A sweep continuation: page the due agents after this id' }),
    run: ContinuationRun,
  })
  .openapi('WatchdogMessage', { description: 'Empty (`{}`) from the cron: start a sweep' })

export const WatchdogResult = z
  .discriminatedUnion('kind', [
    z.object({
      ok: z.literal(true),
      kind: z.literal('sweep'),
      suspended: tallyField('Agents suspended by the reconciliation of paid access (the first page of a run)'),
      due: tallyField('Agents due a check'),
      batches: tallyField('Batch messages published'),
      more: z.boolean().openapi({ description: 'A continuation was published for the next page' }),
    }),
    z.object({
      ok: z.literal(true),
      kind: z.literal('batch'),
      checked: tallyField('Agents leased and probed'),
      healthy: tallyField('Agents found healthy'),
      degraded: tallyField('Agents degraded or repairing: re-probed by a delayed message'),
      repairs: tallyField('Repairs requested through the runtime provider'),
      crashLoops: tallyField('Agents that entered `crash_loop` (their owners are mailed once)'),
    }),
    z.object({
      ok: z.literal(true),
      kind: z.literal('reconcile'),
      suspended: tallyField('Agents suspended: their runtimes stopped, nothing deleted'),
      failed: tallyField('Agents whose runtime could not be stopped now: retried by the next sweep'),
    }),
  ])
  .openapi('WatchdogResult')

export const HealthWaitMessage = z
  .object(
    {
      agentId,
      startedAt: z.iso.datetime({ error: 'startedAt must be an ISO 8601 time' }).max(40).openapi({ description: 'The agent’s start this wait is for' }),
      until: z.number().int().min(0).max(8_640_000_000_000).openapi({ format: 'int64', description: 'Epoch ms after which no further probe is queued' }),
    },
    { error: 'Request body must be a JSON object' },
  )
  .openapi('HealthWaitMessage')

export const HealthWaitResult = z
  .object({
    ok: z.literal(true),
    outcome: z.enum(['running', 'waiting', 'timed-out', 'stale']).openapi({
      description: '`running`: recorded running now; `waiting`: the next probe is queued; `timed-out`: the wait is over; `stale`: the agent is gone, not starting, or started again since',
    }),
  })
  .openapi('HealthWaitResult')
