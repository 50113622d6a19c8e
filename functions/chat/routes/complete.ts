import { createRoute } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { requireSessionOrApiKey } from '../../../lib/auth/dual'
import type { AppEnv } from '../../../lib/context'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { jsonBody } from '../../../lib/http/validation'
import { log } from '../../../lib/log'
import { jobView } from '../jobs'
import { settleClaimedJob } from '../lease'
import { CompleteJobBody, JobParams, JobSchema, MAX_CLAIMED_REPLY } from '../schemas'
import { LEASE_END_DOC, LEASE_END_RESPONSES } from '../lease-docs'

export const route = createRoute({
  method: 'post',
  path: '/api/jobs/{jobId}/complete',
  operationId: 'completeJob',
  tags: ['Gateway'],
  summary: 'Complete a claimed chat job with its result (the lease holder)',
  description:
    'The path is this platform’s choice (the spec names only the claim). The job becomes `succeeded` with `result` ' +
    `\`{sessionId, reply}\` (\`sessionId\` null when not sent; \`reply\` at most ${MAX_CLAIMED_REPLY} characters). ` +
    LEASE_END_DOC,
  security: [{ session: [] }, { apiKey: [] }] as Record<string, string[]>[],
  middleware: [requireSessionOrApiKey],
  request: { params: JobParams, body: jsonBody(CompleteJobBody) },
  responses: {
    200: ok(JobSchema, 'The job, `succeeded`, with its result'),
    400: errorResponse('`leaseId required`, `result required`, `result.reply required`, or a field over its length (`VALIDATION`); malformed JSON (`INVALID_JSON`)'),
    ...LEASE_END_RESPONSES,
  },
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { jobId } = c.req.valid('param')
  const { leaseId, result } = c.req.valid('json')
  const job = await settleClaimedJob(c.var.services.db, c.var.user!.id, jobId, leaseId, {
    status: 'succeeded',
    result: { sessionId: result.sessionId ?? null, reply: result.reply },
    error: null,
  })
  log.info('chat.claim_completed', { jobId, agentId: job.claimedByAgentId, via: c.var.apiKeyId ? 'key' : 'session' })
  return c.json(jobView(job), 200)
}
