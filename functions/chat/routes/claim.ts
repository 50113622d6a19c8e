import { createRoute } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { requireSessionOrApiKey } from '../../../lib/auth/dual'
import { jobView, releaseJobTicket } from '../jobs'
import { claimJob } from '../lease'
import type { AppEnv } from '../../../lib/context'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { jsonBody } from '../../../lib/http/validation'
import { log } from '../../../lib/log'
import { ClaimBody, ClaimedJobSchema, JobParams } from '../schemas'

export const route = createRoute({
  method: 'post',
  path: '/api/jobs/{jobId}/claim',
  operationId: 'claimJob',
  tags: ['Gateway'],
  summary: 'Claim a chat job for one of the caller’s agents',
  description:
    'Dual authentication: the session cookie first, then `Authorization: Bearer <API key>`. The job and the claiming ' +
    'agent must both be the caller’s (another user’s read as absent: 404). A claim leases the job to its claimer for ' +
    '`CHAT_JOB_LEASE_SEC` (default 300 s): the job is `running`, and the answer carries `leaseId` and `leaseExpiresAt`. ' +
    'Until then only the lease’s holder ends the job: `POST /api/jobs/{jobId}/complete` with a result, or ' +
    '`POST /api/jobs/{jobId}/fail` with a reason (the same dual authentication). When the lease runs out first the job ' +
    'returns to the queue: it reads as `queued` and the next claim takes it under a new lease (the old `leaseId` is then ' +
    'refused). Exactly one claim wins, however many arrive at once, also when they meet an expired lease; every other ' +
    'gets 409 `ALREADY_CLAIMED`, and so does a second claim by the same agent while the lease is live. A finished job ' +
    '(`succeeded`, `failed`) cannot be claimed (409). A claimed job is no longer delivered by the queue (an expired ' +
    'lease does not put it back on the queue’s delivery: it waits for a claimer), its workload slots are given back, ' +
    'and a delivery already under way still stores its reply.',
  // Either scheme (typed as the document's list, which two differently keyed literals would not infer as).
  security: [{ session: [] }, { apiKey: [] }] as Record<string, string[]>[],
  middleware: [requireSessionOrApiKey],
  request: { params: JobParams, body: jsonBody(ClaimBody) },
  responses: {
    200: ok(ClaimedJobSchema, 'Claimed: the job with its claimer and lease'),
    400: errorResponse('`claimerAgentId required` (`VALIDATION`); malformed JSON (`INVALID_JSON`)'),
    401: errorResponse('No session and no valid API key (`UNAUTHORIZED`)'),
    403: errorResponse('A cookie-authenticated claim sent from a foreign `Origin` (`ORIGIN_NOT_ALLOWED`)'),
    404: errorResponse('`Job not found`, or `Agent not found`: `claimerAgentId` is not one of the caller’s agents (`NOT_FOUND`)'),
    409: errorResponse('`Job already claimed`: another lease is live (`ALREADY_CLAIMED`); `Job already finished` (`INVALID_TRANSITION`)'),
  },
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { jobId } = c.req.valid('param')
  const { claimerAgentId } = c.req.valid('json')
  const { services } = c.var
  const claimed = await claimJob(services.db, c.var.user!.id, jobId, claimerAgentId, services.config.CHAT_JOB_LEASE_SEC)
  await releaseJobTicket(services, claimed)
  log.info('chat.claimed', { jobId, agentId: claimerAgentId, leaseExpiresAt: claimed.leaseExpiresAt!.toISOString(), via: c.var.apiKeyId ? 'key' : 'session' })
  return c.json(
    {
      ...jobView(claimed),
      claimedByAgentId: claimed.claimedByAgentId!,
      claimedAt: claimed.claimedAt!.toISOString(),
      leaseId: claimed.leaseId!,
      leaseExpiresAt: claimed.leaseExpiresAt!.toISOString(),
    },
    200,
  )
}
