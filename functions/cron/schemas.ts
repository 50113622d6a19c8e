import { z } from '@hono/zod-openapi'
import { MAX_BATCH } from '../../lib/watchdog/sweep'

const agentId = z.string().min(1).max(100)

export const WatchdogMessage = z
  .object({
    agentIds: z.array(agentId).min(1).max(MAX_BATCH).optional().openapi({ description: 'A batch: check these agents (those due and not leased elsewhere)' }),
    cursor: agentId.optional().openapi({ description: 'A sweep continuation: page the due agents after this id' }),
  })
  .openapi('WatchdogMessage', { description: 'Empty (`{}`) from the cron: start a sweep' })

export const WatchdogResult = z
  .discriminatedUnion('kind', [
    z.object({
      ok: z.literal(true),
      kind: z.literal('sweep'),
      due: z.number().int().openapi({ description: 'Agents due a check' }),
      batches: z.number().int().openapi({ description: 'Batch messages published' }),
      more: z.boolean().openapi({ description: 'A continuation was published for the next page' }),
    }),
    z.object({
      ok: z.literal(true),
      kind: z.literal('batch'),
      checked: z.number().int().openapi({ description: 'Agents leased and probed' }),
      healthy: z.number().int(),
      degraded: z.number().int().openapi({ description: 'Agents degraded or repairing: re-probed by a delayed message' }),
      repairs: z.number().int().openapi({ description: 'Repairs requested through the runtime provider' }),
      crashLoops: z.number().int().openapi({ description: 'Agents that entered `crash_loop` (their owners are mailed once)' }),
    }),
  ])
  .openapi('WatchdogResult')
