import type { RouteHandler } from '@hono/zod-openapi'
import { eq } from 'drizzle-orm'
import { jobNotFound, jobView } from '../jobs'
import { readAsUser } from '../../../lib/db/rls'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { chatJobs } from '../../../schema'
import { JobParams, JobSchema } from '../schemas'

export const route = signedInRoute({
  method: 'get',
  path: '/api/jobs/{jobId}',
  operationId: 'getJob',
  tags: ['Gateway'],
  summary: 'Poll a chat job',
  description:
    'The caller’s own jobs only: another user’s job id reads as absent (404). `queued` → `running` → `succeeded` ' +
    '(with `result`) or `failed` (with `error`); a failed delivery that will be retried is back to `queued` with its ' +
    '`error` until the next attempt. A job claimed by an agent (`POST /api/jobs/{jobId}/claim`) is `running` with ' +
    '`claimedByAgentId` and `leaseExpiresAt` while the lease is live, and the platform no longer delivers it; its holder ' +
    'ends it (`succeeded` with the `result` it sent, or `failed` with its reason as `error`). A lease that ran out is ' +
    'judged when read, with the server’s clock: the job reads as `queued` with no claimer, ready for the next claim.',
  request: { params: JobParams },
  responses: {
    200: ok(JobSchema),
    404: errorResponse('`Job not found`: no such job of the caller’s (`NOT_FOUND`)'),
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const { jobId } = c.req.valid('param')
  const [job] = await readAsUser(c, (db) => db.select().from(chatJobs).where(eq(chatJobs.id, jobId)).limit(1))
  if (!job) throw jobNotFound()
  return c.json(jobView(job), 200)
}
