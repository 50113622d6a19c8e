import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { findOwnAgent, TOKEN_UNREADABLE_DOC } from '../../../lib/agents/access'
import { providerApiError } from '../../../lib/agents/lifecycle'
import { PAID_ACCESS_RULE, PLAN_REQUIRED_DOC, requirePaidAccess } from '../../../lib/auth/plan'
import { syncAgent } from '../../../lib/agents/sync'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { log } from '../../../lib/log'
import { RuntimeProviderError, type SyncPayload } from '../../../lib/runtime/provider'
import { agentRoute } from '../route'
import { AgentIdParams, NOT_FOUND, PROVIDER_DOWN } from '../../../lib/agents/schemas'

const count = () => z.number().int().min(0).max(10_000).openapi({ format: 'int32' })

export const route = agentRoute({
  method: 'post',
  path: '/api/agents/{id}/sync',
  operationId: 'syncAgent',
  tags: ['Agents'],
  summary: 'Push the agent’s skills, memories and files to its gateway',
  description:
    'One `POST /api/gateway/sync` to the runtime with what the platform stores for the agent, which replaces the ' +
    "runtime's own: skills are the agent's enabled installed skills (each its `service.skill.v1` manifest, as " +
    "`GET /api/skills/{skillId}/download` answers it, versioned by the skill's `updatedAt`); memories are the agent's " +
    '`config.memories` (an object of strings, or a list of `{key, value}` strings); files are sent as an empty list ' +
    'until the files family stores them per agent. The counts pushed are answered. It changes the runtime, so it ' +
    `needs paid access at the moment of use (${PAID_ACCESS_RULE}).`,
  request: { params: AgentIdParams },
  responses: {
    200: ok(z.object({ success: z.literal(true), agentId: z.string().max(255), synced: z.object({ skills: count(), memories: count(), files: count() }) }).openapi('AgentSynced')),
    402: errorResponse(PLAN_REQUIRED_DOC),
    404: errorResponse(`${NOT_FOUND}; or the agent has no runtime (\`NOT_FOUND\`)`),
    409: errorResponse(`Nothing pushed: ${TOKEN_UNREADABLE_DOC}`),
    502: errorResponse(PROVIDER_DOWN),
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const { db } = c.var.services
  const agent = await findOwnAgent(db, c.var.user.id, c.req.valid('param').id)
  await requirePaidAccess(c.var.services, agent.userId)
  let payload: SyncPayload
  try {
    payload = await syncAgent(c.var.services, agent)
  } catch (e) {
    if (!(e instanceof RuntimeProviderError)) throw e
    log.warn('agent.sync_failed', { dependency: e.provider, agentId: agent.id, status: e.status, reason: e.message })
    throw providerApiError(e)
  }
  log.info('agent.synced', { agentId: agent.id, skills: payload.skills.length, memories: payload.memories.length })
  return c.json({ success: true as const, agentId: agent.id, synced: { skills: payload.skills.length, memories: payload.memories.length, files: payload.files.length } }, 200)
}
