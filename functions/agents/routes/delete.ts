import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { findOwnAgent } from '../../../lib/agents/access'
import { deleteAgent } from '../../../lib/agents/lifecycle'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { agentRoute } from '../route'
import { AgentIdParams, NOT_FOUND } from '../../../lib/agents/schemas'

export const route = agentRoute({
  method: 'delete',
  path: '/api/agents/{id}',
  operationId: 'deleteAgent',
  tags: ['Agents'],
  summary: 'Delete an agent, its runtime and its files',
  description:
    'The runtime is removed through the provider first (found by its service id or name: the gateway token is not needed, ' +
    'so an agent whose token this server cannot read goes too), then the record. A runtime the provider no longer has ' +
    'still lets the record go; any other provider failure keeps the record (status `error`, with the reason) and answers ' +
    '502 (`RUNTIME_UNAVAILABLE`).\n\n' +
    'Files: with the record, each of the agent’s files is hidden at once (no longer listed or served) but still counts ' +
    'against the storage quota until its object is deleted from storage (local files or S3). That deletion is queued ' +
    'to the files service and retried while storage refuses (the caller’s next upload also finishes it); only then ' +
    'does each file’s record go and its bytes stop counting.',
  request: { params: AgentIdParams },
  responses: {
    200: ok(z.object({ success: z.literal(true), id: z.string().max(255) }).openapi('AgentDeleted')),
    404: errorResponse(NOT_FOUND),
    502: errorResponse('The runtime provider failed (`RUNTIME_UNAVAILABLE`); the agent is kept in status `error`'),
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const agent = await findOwnAgent(c.var.services.db, c.var.user.id, c.req.valid('param').id)
  await deleteAgent(c.var.services, agent)
  return c.json({ success: true as const, id: agent.id }, 200)
}
