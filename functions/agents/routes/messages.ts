import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { agentGateway, findOwnAgent, isGatewayTokenUnreadable } from '../../../lib/agents/access'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { RuntimeProviderError } from '../../../lib/runtime/provider'
import { agentRoute } from '../route'
import { AgentIdParams, NOT_FOUND } from '../../../lib/agents/schemas'

const MAX_SESSIONS = 200

const Session = z
  .object({
    id: z.string().max(255),
    channel: z.enum(['webchat', 'telegram', 'discord', 'whatsapp']),
    lastActive: z.string().max(64).nullable().openapi({ format: 'date-time' }),
    messages: z.number().int().min(0).max(2_147_483_647).openapi({ format: 'int32', description: 'Messages in the session' }),
  })
  .openapi('AgentSession')

const Answer = z
  .object({
    agentId: z.string().max(255),
    source: z.enum(['gateway', 'unavailable']).openapi({ description: '`gateway` when the runtime answered; `unavailable` when it could not be read (then `sessions` is empty and `error` says why)' }),
    sessions: z.array(Session).max(MAX_SESSIONS),
    totalMessages: z.number().int().min(0).max(2_147_483_647).openapi({ format: 'int32' }),
    error: z.string().max(200).optional(),
  })
  .openapi('AgentMessages')

export const route = agentRoute({
  method: 'get',
  path: '/api/agents/{id}/messages',
  operationId: 'getAgentMessages',
  tags: ['Agents'],
  summary: 'The agent’s conversations, as its gateway reports them',
  description:
    `The gateway's sessions (at most ${MAX_SESSIONS}, most recent first) with their message counts. A runtime that cannot be ` +
    'read (no runtime yet, stopped, unreachable, a wrong answer, a gateway token this server cannot open) is not an error of this route: 200 with `source: unavailable`, ' +
    'an empty list and the reason in `error`, so a dashboard can show the agent either way.',
  request: { params: AgentIdParams },
  responses: { 200: ok(Answer), 404: errorResponse(NOT_FOUND) },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const agent = await findOwnAgent(c.var.services.db, c.var.user.id, c.req.valid('param').id)
  try {
    // The runtime's answer is checked item by item: an entry that is not the documented shape is dropped.
    const sessions = (await (await agentGateway(c.var.services, agent)).sessions())
      .flatMap((s) => {
        const parsed = Session.safeParse(s)
        return parsed.success ? [parsed.data] : []
      })
      .sort((a, b) => (b.lastActive ?? '').localeCompare(a.lastActive ?? ''))
      .slice(0, MAX_SESSIONS)
    const totalMessages = sessions.reduce((n, s) => n + s.messages, 0)
    return c.json({ agentId: agent.id, source: 'gateway' as const, sessions, totalMessages }, 200)
  } catch (e) {
    if (!(e instanceof RuntimeProviderError) && !isGatewayTokenUnreadable(e)) throw e
    return c.json({ agentId: agent.id, source: 'unavailable' as const, sessions: [], totalMessages: 0, error: e.message.slice(0, 200) }, 200)
  }
}
