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
    'so an agent whose token this server cannot read goes too), then the agent’s files, then the record. A runtime the provider no ' +
    'longer has still lets the record go; any other provider failure keeps the record (status `error`, with the reason) and ' +
    'answers 502 (`RUNTIME_UNAVAILABLE`).\n\n' +
    'Files: each is hidden at once, its object is deleted from storage (local files or S3), and only then does its record go ' +
    'and its bytes stop counting against the storage quota. Should storage fail to delete an object, the record is kept ' +
    '(status `error`, with the reason), the files that remain stay hidden and counted, and the answer is 502 ' +
    '(`STORAGE_UNAVAILABLE`): send the delete again (the caller’s next upload also retries unfinished deletes). An upload ' +
    'to the agent that keeps landing while it is deleted answers 409 (`CONFLICT`) after three rounds: try again.',
  request: { params: AgentIdParams },
  responses: {
    200: ok(z.object({ success: z.literal(true), id: z.string().max(255) }).openapi('AgentDeleted')),
    404: errorResponse(NOT_FOUND),
    409: errorResponse('Uploads to the agent kept landing while it was deleted (`CONFLICT`): try again'),
    502: errorResponse(
      'The runtime provider failed (`RUNTIME_UNAVAILABLE`), or storage could not delete the agent’s files (`STORAGE_UNAVAILABLE`); the agent is kept in status `error`',
    ),
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const agent = await findOwnAgent(c.var.services.db, c.var.user.id, c.req.valid('param').id)
  await deleteAgent(c.var.services, agent)
  return c.json({ success: true as const, id: agent.id }, 200)
}
