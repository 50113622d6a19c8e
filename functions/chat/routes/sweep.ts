import { z } from '@hono/zod-openapi'
import { tallyField } from '../../../lib/http/fields'
import type { RouteHandler } from '@hono/zod-openapi'
import type { AppEnv } from '../../../lib/context'
import { ok } from '../../../lib/http/openapi'
import { queueReceiverRoute } from '../../../lib/http/routes'
import { jsonBody } from '../../../lib/http/validation'
import { CHAT_SWEEP_PATH, QUEUED_SWEEP_AFTER_MS, SWEEP_BATCH, sweepQueuedJobs } from '../sweep'


export const route = queueReceiverRoute({
  path: CHAT_SWEEP_PATH,
  operationId: 'sweepQueuedChatJobs',
  tags: ['Gateway'],
  summary: 'Cron receiver: publish again chat jobs whose queue message was lost',
  description:
    'Signed queue deliveries only (`Upstash-Signature`); the cron (`chat-queued-sweep`) runs every 10 minutes. A chat ' +
    `job still \`queued\` and unclaimed ${QUEUED_SWEEP_AFTER_MS / 60_000} minutes after its last change is waiting on a ` +
    'queue message that will not come (lost by a queue, or a publish that failed after the job was written): it is ' +
    'published again to `POST /api/queue/chat` with its id as the deduplication id and 3 retries, and its `updatedAt` ' +
    `stamped so the next run waits the full bound again. At most ${SWEEP_BATCH} jobs a run, oldest first. A publish ` +
    'that fails is counted and tried at the next run. The job’s delivery is idempotent (a job that moved on is left as ' +
    'it is; the runtime dedupes on the job id), so a job that was only slow is not handled twice.',
  request: { body: jsonBody(z.object({}).openapi('ChatSweepMessage', { description: 'Empty (`{}`) from the cron' })) },
  responses: {
    200: ok(
      z
        .object({
          ok: z.literal(true),
          found: tallyField('Jobs queued past the bound (this run’s batch)'),
          republished: tallyField('Jobs published again'),
          failed: tallyField('Publishes that failed (tried again next run)'),
        })
        .openapi('ChatSweepResult'),
    ),
  },
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const done = await sweepQueuedJobs(c.var.services)
  return c.json({ ok: true as const, ...done }, 200)
}
