import type { RouteHandler } from '@hono/zod-openapi'
import { findInstanceAgent, runLifecycle } from '../../../lib/agents/instance'
import { provisionAgent } from '../../../lib/agents/provision'
import { hasPaidAccess, normalizePlan } from '../../../lib/billing/plans'
import { ApiError } from '../../../lib/http/errors'
import { errorResponse } from '../../../lib/http/openapi'
import { instanceActionRoute } from '../lifecycle'
import { callerRecord, notOwner } from '../shared'

/** The name of the agent `start` creates for a user who has none. */
export const DEFAULT_AGENT_NAME = 'Agent'

export const route = instanceActionRoute(
  'start',
  'startInstance',
  'Start the caller’s instance (deploys it when there is none)',
  'Triggers a deployment: without an agent, one named `Agent` is provisioned on the caller’s plan (paid plan or live trial; admins ' +
    'bypass the plan and its agent count) and `deployed` is true; otherwise the runtime is started through the provider. ' +
    'Either way the agent is recorded `starting`.',
  {
    403: errorResponse('`userId` is not the caller (`FORBIDDEN`); `Active subscription required` (`PLAN_REQUIRED`); or a foreign `Origin` (`ORIGIN_NOT_ALLOWED`)'),
    429: errorResponse('The plan’s agent count is reached (`AGENT_LIMIT`); or over 30 requests per minute per user (`RATE_LIMITED`)'),
    500: errorResponse('Provisioning is disabled on this deployment (`PROVISIONING_DISABLED`)'),
    503: errorResponse('Provisioning is paused by the kill switch (`PROVISIONING_DISABLED`)'),
  },
)

export const handler: RouteHandler<typeof route> = async (c) => {
  const { userId } = c.req.valid('param')
  const me = c.var.user
  if (userId !== me.id) throw notOwner()
  const { services } = c.var
  const agent = await findInstanceAgent(services.db, me.id)
  if (agent) {
    const after = await runLifecycle(services, agent, 'start')
    return c.json({ success: true as const, action: 'start', agentId: after.id, status: after.status, deployed: false }, 200)
  }
  if (services.config.PROVISIONING_KILL_SWITCH) throw new ApiError(503, 'Provisioning is temporarily disabled', { code: 'PROVISIONING_DISABLED' })
  if (!services.config.PROVISIONING_ENABLED) throw new ApiError(500, 'Provisioning is disabled', { code: 'PROVISIONING_DISABLED' })
  const record = await callerRecord(c)
  if (!me.isAdmin && !hasPaidAccess(record)) throw new ApiError(403, 'Active subscription required', { code: 'PLAN_REQUIRED' })
  const created = await provisionAgent(services, { userId: me.id, plan: normalizePlan(record.plan), name: DEFAULT_AGENT_NAME, bypassLimit: me.isAdmin })
  return c.json({ success: true as const, action: 'start', agentId: created.id, status: created.status, deployed: true }, 200)
}
