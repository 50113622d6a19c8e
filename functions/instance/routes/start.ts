import type { RouteHandler } from '@hono/zod-openapi'
import { findInstanceAgent } from '../../../lib/agents/instance'
import { runLifecycle } from '../../../lib/agents/lifecycle'
import { assertProvisioningOpen, provisionAgent, provisioningPlan } from '../../../lib/agents/provision'
import { planRecord, PAID_ACCESS_RULE, PLAN_REQUIRED_DOC } from '../../../lib/auth/plan'
import { errorResponse } from '../../../lib/http/openapi'
import { instanceActionRoute } from '../lifecycle'
import { notOwner } from '../shared'

/** The name of the agent `start` creates for a user who has none. */
export const DEFAULT_AGENT_NAME = 'Agent'

export const route = instanceActionRoute(
  'start',
  'startInstance',
  'Start the caller’s instance (deploys it when there is none)',
  'Triggers a deployment: without an agent, one named `Agent` is provisioned on the caller’s plan (paid plan or live trial; admins ' +
    'bypass the plan and run on network, past its agent count) and `deployed` is true; otherwise the runtime is started through the provider. ' +
    'Either way the agent is recorded `starting`. Starting an existing agent needs paid access at the moment of use ' +
    `(${PAID_ACCESS_RULE}; 402 otherwise); a \`suspended\` one is resumed, counted against the plan’s agents (429 when full).`,
  {
    402: errorResponse(PLAN_REQUIRED_DOC),
    403: errorResponse('`userId` is not the caller (`FORBIDDEN`); `Active subscription required` (`SUBSCRIPTION_REQUIRED`); or a foreign `Origin` (`ORIGIN_NOT_ALLOWED`)'),
    429: errorResponse('The plan’s agent count is reached (`AGENT_LIMIT`); or over 30 requests per minute per user (`RATE_LIMITED`)'),
    500: errorResponse('Provisioning is disabled on this deployment (`PROVISIONING_DISABLED`)'),
    503: errorResponse('`Provisioning is temporarily paused` by the kill switch (`PROVISIONING_PAUSED`)'),
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
  // The same gates as POST /api/provision (lib/agents/provision.ts).
  assertProvisioningOpen(services.config)
  const plan = provisioningPlan(await planRecord(services.db, me.id), services.config)
  const created = await provisionAgent(services, { userId: me.id, plan, name: DEFAULT_AGENT_NAME, bypassLimit: me.isAdmin })
  return c.json({ success: true as const, action: 'start', agentId: created.id, status: created.status, deployed: true }, 200)
}
