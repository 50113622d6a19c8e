import type { RouteHandler } from '@hono/zod-openapi'
import { eq } from 'drizzle-orm'
import { findOwnAgent } from '../../../lib/agents/access'
import { PLAN_RECORD_COLUMNS } from '../../../lib/auth/plan'
import { hasPaidAccess } from '../../../lib/billing/plans'
import { readAsUser } from '../../../lib/db/rls'
import { ApiError } from '../../../lib/http/errors'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { log } from '../../../lib/log'
import { agentRoute } from '../route'
import { users } from '../../../schema'
import { AgentIdParams, NOT_FOUND } from '../../../lib/agents/schemas'
import { setVerification, VerificationSchema, verificationJson } from '../verification'

export const route = agentRoute({
  method: 'post',
  path: '/api/agents/{id}/verify',
  operationId: 'verifyAgent',
  tags: ['Agents'],
  summary: 'Mark the agent human-verified',
  description:
    'The spec shows no proof step. `human_verified` raises the agent’s social post limit from 5 to 50 a day, so it is not ' +
    'free to claim: the owner must have a verified email and paid access (a paid plan or the live trial; admins ' +
    'always), and attests with their signed-in session that a human operates the agent. Sets `verification` and ' +
    '`verifiedAt`. Idempotent: a repeat keeps the first `verifiedAt`.',
  request: { params: AgentIdParams },
  responses: {
    200: ok(VerificationSchema),
    403: errorResponse('`Verification needs a verified email and paid access` (`FORBIDDEN`); or a foreign `Origin` (`ORIGIN_NOT_ALLOWED`)'),
    404: errorResponse(NOT_FOUND),
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const agent = await findOwnAgent(c.var.services.db, c.var.user.id, c.req.valid('param').id)
  if (agent.verification === 'human_verified') return c.json(verificationJson(agent), 200)
  const me = c.var.user
  if (!me.isAdmin) {
    const [owner] = await readAsUser(c, (tx) => tx.select(PLAN_RECORD_COLUMNS).from(users).where(eq(users.id, me.id)))
    if (!owner?.emailVerifiedAt || !hasPaidAccess(owner, c.var.services.config)) {
      throw new ApiError('FORBIDDEN', 'Verification needs a verified email and paid access')
    }
  }
  const row = await setVerification(c.var.services.db, agent, true)
  log.info('agent.verified', { agentId: agent.id })
  return c.json(verificationJson(row), 200)
}
