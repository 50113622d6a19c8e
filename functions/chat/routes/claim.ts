import { createRoute } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { and, eq, inArray, isNull } from 'drizzle-orm'
import { agentNotFound } from '../../../lib/agents/access'
import { requireSessionOrApiKey } from '../../../lib/auth/dual'
import { jobNotFound, jobView, releaseJobTicket, UNFINISHED } from '../jobs'
import type { AppEnv } from '../../../lib/context'
import { withUser } from '../../../lib/db/rls'
import { ApiError } from '../../../lib/http/errors'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { jsonBody } from '../../../lib/http/validation'
import { log } from '../../../lib/log'
import { agents, chatJobs } from '../../../schema'
import { ClaimBody, ClaimedJobSchema, JobParams } from '../schemas'

export const route = createRoute({
  method: 'post',
  path: '/api/jobs/{jobId}/claim',
  operationId: 'claimJob',
  tags: ['Gateway'],
  summary: 'Claim a chat job for one of the caller’s agents',
  description:
    'Dual authentication: the session cookie first, then `Authorization: Bearer <API key>`. The job and the claiming ' +
    'agent must both be the caller’s (another user’s read as absent: 404). Exactly one claim wins, however many arrive ' +
    'at once; every other gets 409 `ALREADY_CLAIMED`, and so does a second claim by the same agent. A finished job ' +
    '(`succeeded`, `failed`) cannot be claimed (409). A claimed job is no longer delivered by the queue, its workload ' +
    'slots are given back, and it keeps its status (a delivery already under way still stores its reply).',
  // Either scheme (typed as the document's list, which two differently keyed literals would not infer as).
  security: [{ session: [] }, { apiKey: [] }] as Record<string, string[]>[],
  middleware: [requireSessionOrApiKey],
  request: { params: JobParams, body: jsonBody(ClaimBody) },
  responses: {
    200: ok(ClaimedJobSchema, 'Claimed: the job with its claimer'),
    400: errorResponse('`claimerAgentId required` (`VALIDATION`); malformed JSON (`INVALID_JSON`)'),
    401: errorResponse('No session and no valid API key (`UNAUTHORIZED`)'),
    403: errorResponse('A cookie-authenticated claim sent from a foreign `Origin` (`ORIGIN_NOT_ALLOWED`)'),
    404: errorResponse('`Job not found`, or `Agent not found`: `claimerAgentId` is not one of the caller’s agents (`NOT_FOUND`)'),
    409: errorResponse('`Job already claimed` (`ALREADY_CLAIMED`); `Job already finished` (`INVALID_TRANSITION`)'),
  },
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { jobId } = c.req.valid('param')
  const { claimerAgentId } = c.req.valid('json')
  const userId = c.var.user!.id
  const claimed = await withUser(c.var.services.db, userId, async (tx) => {
    const [job] = await tx.select().from(chatJobs).where(eq(chatJobs.id, jobId))
    if (!job) throw jobNotFound()
    const [agent] = await tx.select({ id: agents.id }).from(agents).where(and(eq(agents.id, claimerAgentId), eq(agents.userId, userId)))
    if (!agent) throw agentNotFound()
    const now = new Date()
    // The one winner: a concurrent claim waits for this row's lock, then no longer matches `claimed_by_agent_id IS NULL`.
    const [won] = await tx
      .update(chatJobs)
      .set({ claimedByAgentId: agent.id, claimedAt: now, updatedAt: now })
      .where(and(eq(chatJobs.id, jobId), isNull(chatJobs.claimedByAgentId), inArray(chatJobs.status, UNFINISHED)))
      .returning()
    if (won) return won
    const [current] = await tx.select().from(chatJobs).where(eq(chatJobs.id, jobId))
    if (current?.claimedByAgentId) throw new ApiError('ALREADY_CLAIMED')
    throw new ApiError('INVALID_TRANSITION', 'Job already finished')
  })
  await releaseJobTicket(c.var.services, claimed)
  log.info('chat.claimed', { jobId, agentId: claimerAgentId, via: c.var.apiKeyId ? 'key' : 'session' })
  return c.json({ ...jobView(claimed), claimedByAgentId: claimed.claimedByAgentId!, claimedAt: claimed.claimedAt!.toISOString() }, 200)
}
