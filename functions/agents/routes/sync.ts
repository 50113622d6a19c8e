import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { agentGateway, findOwnAgent } from '../../../lib/agents/access'
import { providerApiError } from '../../../lib/agents/lifecycle'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { log } from '../../../lib/log'
import { RuntimeProviderError, type SyncPayload } from '../../../lib/runtime/provider'
import { agentRoute } from '../route'
import { AgentIdParams, NOT_FOUND, PROVIDER_DOWN } from '../schemas'

const count = () => z.number().int().min(0).max(10_000).openapi({ format: 'int32' })

export const route = agentRoute({
  method: 'post',
  path: '/api/agents/{id}/sync',
  operationId: 'syncAgent',
  tags: ['Agents'],
  summary: 'Push the agent’s skills, memories and files to its gateway',
  description:
    "One `POST /api/gateway/sync` to the runtime with what the platform stores for the agent. Memories are the agent's " +
    '`config.memories` (an object of strings, or a list of `{key, value}` strings). Skills and files are sent as empty ' +
    'lists until the skills and files families store them per agent. The counts pushed are answered.',
  request: { params: AgentIdParams },
  responses: {
    200: ok(z.object({ success: z.literal(true), agentId: z.string().max(255), synced: z.object({ skills: count(), memories: count(), files: count() }) }).openapi('AgentSynced')),
    404: errorResponse(`${NOT_FOUND}; or the agent has no runtime (\`NOT_FOUND\`)`),
    502: errorResponse(PROVIDER_DOWN),
  },
})

/** `config.memories` as the sync payload's list; anything else in it is skipped. */
export function memoriesOf(config: Record<string, unknown>): SyncPayload['memories'] {
  const m = config.memories
  if (Array.isArray(m)) {
    return m.flatMap((e) => (e && typeof e === 'object' && typeof e.key === 'string' && typeof e.value === 'string' ? [{ key: e.key, value: e.value }] : []))
  }
  if (m && typeof m === 'object') return Object.entries(m).flatMap(([key, value]) => (typeof value === 'string' ? [{ key, value }] : []))
  return []
}

export const handler: RouteHandler<typeof route> = async (c) => {
  const { db } = c.var.services
  const agent = await findOwnAgent(db, c.var.user.id, c.req.valid('param').id)
  const payload: SyncPayload = { skills: [], memories: memoriesOf(agent.config), files: [] }
  try {
    await (await agentGateway(c.var.services, agent)).sync(payload)
  } catch (e) {
    if (e instanceof RuntimeProviderError) throw providerApiError(e)
    throw e
  }
  log.info('agent.synced', { agentId: agent.id, memories: payload.memories.length })
  return c.json({ success: true as const, agentId: agent.id, synced: { skills: payload.skills.length, memories: payload.memories.length, files: payload.files.length } }, 200)
}
