import { createRoute } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { requireSessionOrApiKey } from '../../../lib/auth/dual'
import type { AppEnv } from '../../../lib/context'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { jsonBody } from '../../../lib/http/validation'
import { log } from '../../../lib/log'
import { jobView } from '../jobs'
import { settleClaimedJob } from '../lease'
import { FailJobBody, JobParams, JobSchema } from '../schemas'
import { LEASE_END_DOC, LEASE_END_RESPONSES } from '../lease-docs'

export const route = createRoute({
  method: 'post',
  path: '/api/jobs/{jobId}/fail',
  operationId: 'failJob',
  tags: ['Gateway'],
  summary: 'Fail a claimed chat job with a reason (the lease holder)',
  description:
    'The path is this platform’s choice (the spec names only the claim). The job becomes `failed` with the reason ' +
    '(trimmed, 1 to 2048 characters) as its `error`; it is final: not delivered or claimed again. ' +
    LEASE_END_DOC,
  security: [{ session: [] }, { apiKey: [] }] as Record<string, string[]>[],
  middleware: [requireSessionOrApiKey],
  request: { params: JobParams, body: jsonBody(FailJobBody) },
  responses: {
    200: ok(JobSchema, 'The job, `failed`, with the reason as `error`'),
    400: errorResponse('`leaseId required`, `reason required` (missing or blank), or a field over its length (`VALIDATION`); malformed JSON (`INVALID_JSON`)'),
    ...LEASE_END_RESPONSES,
  },
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { jobId } = c.req.valid('param')
  const { leaseId, reason } = c.req.valid('json')
  const job = await settleClaimedJob(c.var.services.db, c.var.user!.id, jobId, leaseId, { status: 'failed', error: reason })
  log.info('chat.claim_failed', { jobId, agentId: job.claimedByAgentId, via: c.var.apiKeyId ? 'key' : 'session' })
  return c.json(jobView(job), 200)
}
